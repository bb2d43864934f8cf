/**
 * The outbox on a local filesystem:
 *
 *   <dir>/objects/<name>            objects
 *   <dir>/manifests/<name>          manifests
 *   <dir>/manifests/.lock           exclusive writer lock (O_EXCL create; stale after `staleMs`)
 *   .tmp-*                          private temporaries; never part of the outbox, ignored by verification
 *
 * Every record is published with the same-directory pattern: write a private temp file, fsync it, hard-link it
 * to the final name (link fails if the name exists — never overwrite-by-rename), fsync the directory, remove
 * the temp name. A crash between any two steps leaves either no final name or a complete, fsynced one. A
 * retry of identical bytes finds the existing name and verifies it byte for byte.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import {
  OutboxConflictError,
  type BoundedRead,
  type LockOptions,
  type OutboxRecords,
  type OutboxStore,
  type PublishHooks,
  type PublishStep,
  type RecordKind,
} from '../../ports/outbox.ts';

const subdir = (dir: string, kind: RecordKind): string =>
  join(dir, kind === 'object' ? 'objects' : 'manifests');

/** Read only: the handoff mounts the outbox read-only, and nothing here creates or changes a file. */
export function nodeOutboxRecords(dir: string): OutboxRecords {
  return {
    async list(kind) {
      try {
        return (await readdir(subdir(dir, kind))).filter((n) => !n.startsWith('.')).sort();
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        return [];
      }
    },
    read: (kind, name) => readFile(join(subdir(dir, kind), name)),
    readBounded: (kind, name, maxBytes) => readBounded(join(subdir(dir, kind), name), maxBytes),
  };
}

/** The exporter's outbox: the reads, plus create-if-absent publication and the writer lock. */
export function nodeOutboxStore(dir: string): OutboxStore {
  return {
    ...nodeOutboxRecords(dir),
    async create() {
      await mkdir(subdir(dir, 'object'), { recursive: true, mode: 0o700 });
      await mkdir(subdir(dir, 'manifest'), { recursive: true, mode: 0o700 });
    },
    publish: (kind, name, bytes, hooks) => publishFile(subdir(dir, kind), name, bytes, kind, hooks),
    lock: (opts) => acquireLock(join(subdir(dir, 'manifest'), '.lock'), opts),
  };
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** temp → fsync → link (create-if-absent) → fsync dir → unlink temp. Returns false when identical bytes existed. */
async function publishFile(
  dir: string,
  name: string,
  bytes: Buffer,
  record: RecordKind,
  hooks: PublishHooks | undefined,
): Promise<boolean> {
  const step = async (s: PublishStep): Promise<void> => {
    await hooks?.afterStep?.(s, record);
  };
  const final = join(dir, name);
  const tmp = join(dir, `.tmp-${process.pid}-${randomBytes(8).toString('hex')}`);
  const fh = await open(tmp, 'wx', 0o600);
  try {
    await fh.writeFile(bytes);
    await step('temp-written');
    await fh.sync();
  } finally {
    await fh.close();
  }
  await step('temp-synced');
  try {
    await link(tmp, final);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    const existing = await readFile(final);
    if (!existing.equals(bytes)) throw new OutboxConflictError(final);
    return false;
  }
  await step('linked');
  await syncDir(dir);
  await step('dir-synced');
  await unlink(tmp);
  await step('temp-removed');
  return true;
}

/**
 * Exclusive lock file (O_EXCL). A lock older than `staleMs` is taken over by renaming it aside first (rename is
 * atomic, so only one contender wins the takeover). Release removes the file only if it still holds our token.
 */
export async function acquireLock(path: string, opts: LockOptions = {}): Promise<() => Promise<void>> {
  const staleMs = opts.staleMs ?? 30_000;
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
  const token = `${process.pid}-${randomBytes(8).toString('hex')}`;
  for (;;) {
    try {
      const fh = await open(path, 'wx', 0o600);
      try {
        await fh.writeFile(token);
        await fh.sync();
      } finally {
        await fh.close();
      }
      return async () => {
        const held = await readFile(path, 'utf8').catch(() => null);
        if (held === token) await unlink(path).catch(() => undefined);
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const st = await stat(path).catch(() => null);
    if (st && Date.now() - st.mtimeMs > staleMs) {
      const aside = `${path}.stale-${randomBytes(6).toString('hex')}`;
      if (
        await rename(path, aside).then(
          () => true,
          () => false,
        )
      )
        await unlink(aside).catch(() => undefined);
      continue;
    }
    if (Date.now() > deadline) throw new Error(`outbox lock busy: ${path}`);
    await new Promise((r) => setTimeout(r, 5 + Math.floor(Math.random() * 20)));
  }
}

/** A buffer of the size found at open plus one byte: filling it means the file grew while being read. */
async function readBounded(path: string, maxBytes: number): Promise<BoundedRead> {
  let fh;
  try {
    fh = await open(path, 'r');
  } catch {
    return { ok: false, reason: 'missing' };
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { ok: false, reason: 'missing' };
    if (st.size > maxBytes) return { ok: false, reason: 'too-large' };
    const buf = Buffer.alloc(st.size + 1);
    let filled = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, filled, buf.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
      if (filled === buf.length) return { ok: false, reason: 'corrupt' }; // grew while being read
    }
    return { ok: true, bytes: buf.subarray(0, filled) };
  } finally {
    await fh.close();
  }
}
