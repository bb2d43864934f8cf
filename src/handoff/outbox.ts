/**
 * Append-only outbox on a local filesystem.
 *
 *   <dir>/objects/<sha256>.json     content-addressed transcript windows (id = SHA-256 of the stored bytes,
 *                                   which are the canonical JSON serialization)
 *   <dir>/manifests/<seq:12>.json   { schema, seq, prev, objects, createdAt } — seq starts at 1 and increases by
 *                                   one; prev is the SHA-256 of the previous manifest's bytes (null for seq 1)
 *   <dir>/manifests/.lock           exclusive writer lock (O_EXCL create; stale after `staleMs`)
 *   .tmp-*                          private temporaries; never part of the outbox, ignored by verification
 *
 * Every record is published with the same-directory pattern: write a private temp file, fsync it, hard-link it
 * to the final name (link fails if the name exists — never overwrite-by-rename), fsync the directory, remove
 * the temp name. A crash between any two steps leaves either no final name or a complete, fsynced one. A
 * retry of identical bytes finds the existing name and verifies it byte for byte.
 *
 * Forks are impossible even if the lock is broken: a manifest name is created only by `link`, which fails when
 * another writer got that sequence first; the loser re-reads the chain and retries. The lock only serializes.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalJson, sha256Hex } from '../domain/canonical.ts';

export const MANIFEST_SCHEMA = 'muninn.outbox-manifest/1';

export type PublishStep = 'temp-written' | 'temp-synced' | 'linked' | 'dir-synced' | 'temp-removed';
/** Test seam: throwing from `afterStep` simulates the process dying right after that step. */
export interface PublishHooks {
  afterStep?(step: PublishStep, record: 'object' | 'manifest'): void | Promise<void>;
}

export interface LockOptions {
  staleMs?: number;
  timeoutMs?: number;
}

export interface Manifest {
  schema: typeof MANIFEST_SCHEMA;
  seq: number;
  prev: string | null;
  objects: string[];
  createdAt: string;
}

export class OutboxConflictError extends Error {
  constructor(public readonly path: string) {
    super(`outbox: ${path} exists with different content`);
    this.name = 'OutboxConflictError';
  }
}

const HEX64 = /^[0-9a-f]{64}$/;
const MANIFEST_NAME = /^(\d{12})\.json$/;
const objectsDir = (dir: string): string => join(dir, 'objects');
const manifestsDir = (dir: string): string => join(dir, 'manifests');
const manifestName = (seq: number): string => `${String(seq).padStart(12, '0')}.json`;

export async function ensureOutbox(dir: string): Promise<void> {
  await mkdir(objectsDir(dir), { recursive: true, mode: 0o700 });
  await mkdir(manifestsDir(dir), { recursive: true, mode: 0o700 });
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
  record: 'object' | 'manifest',
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

/** Publishes a content-addressed object. Idempotent: identical input yields the same id and verifies the file. */
export async function publishObject(
  dir: string,
  obj: unknown,
  hooks?: PublishHooks,
): Promise<{ id: string; created: boolean }> {
  await ensureOutbox(dir);
  const bytes = Buffer.from(canonicalJson(obj), 'utf8');
  const id = sha256Hex(bytes);
  const created = await publishFile(objectsDir(dir), `${id}.json`, bytes, 'object', hooks);
  return { id, created };
}

async function readVerifiedObject(dir: string, id: string): Promise<Buffer | null> {
  if (!HEX64.test(id)) return null;
  try {
    const bytes = await readFile(join(objectsDir(dir), `${id}.json`));
    return sha256Hex(bytes) === id ? bytes : null;
  } catch {
    return null;
  }
}

export interface ChainEntry {
  seq: number;
  hash: string;
  manifest: Manifest;
}
export type ChainBreak =
  | 'UNEXPECTED_FILE'
  | 'SEQUENCE_GAP'
  | 'UNPARSEABLE'
  | 'NOT_CANONICAL'
  | 'BAD_SCHEMA'
  | 'SEQ_MISMATCH'
  | 'PREV_HASH_MISMATCH'
  | 'OBJECT_MISSING_OR_CORRUPT'
  | 'CHECKPOINT_MISMATCH';
export type ChainResult =
  | { ok: true; manifests: ChainEntry[]; head: { seq: number; hash: string } | null }
  | { ok: false; manifests: ChainEntry[]; break: { seq: number; reason: ChainBreak } };

/**
 * Verifies the whole chain: contiguous sequence from 1, canonical bytes, prev-hash links, and (unless
 * `objects: false`) every named object present with matching SHA-256. `checkpoint` is a consumer's trusted
 * (seq, hash): the chain must still contain exactly that manifest, which also detects truncation behind it.
 */
export async function verifyChain(
  dir: string,
  opts: { objects?: boolean; checkpoint?: { seq: number; hash: string } } = {},
): Promise<ChainResult> {
  const checkObjects = opts.objects ?? true;
  let names: string[];
  try {
    names = (await readdir(manifestsDir(dir))).filter((n) => !n.startsWith('.')).sort();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    names = [];
  }
  const manifests: ChainEntry[] = [];
  const fail = (seq: number, reason: ChainBreak): ChainResult => ({
    ok: false,
    manifests,
    break: { seq, reason },
  });
  let prev: string | null = null;
  for (const [i, name] of names.entries()) {
    const expected = i + 1;
    const m = MANIFEST_NAME.exec(name);
    if (!m) return fail(expected, 'UNEXPECTED_FILE');
    if (Number(m[1]) !== expected) return fail(expected, 'SEQUENCE_GAP');
    const bytes = await readFile(join(manifestsDir(dir), name));
    const text = bytes.toString('utf8');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return fail(expected, 'UNPARSEABLE');
    }
    if (canonicalJson(parsed) !== text) return fail(expected, 'NOT_CANONICAL');
    if (!isManifest(parsed)) return fail(expected, 'BAD_SCHEMA');
    if (parsed.seq !== expected) return fail(expected, 'SEQ_MISMATCH');
    if (parsed.prev !== prev) return fail(expected, 'PREV_HASH_MISMATCH');
    if (checkObjects) {
      for (const id of parsed.objects) {
        if (!(await readVerifiedObject(dir, id))) return fail(expected, 'OBJECT_MISSING_OR_CORRUPT');
      }
    }
    const hash = sha256Hex(bytes);
    manifests.push({ seq: expected, hash, manifest: parsed });
    prev = hash;
  }
  if (opts.checkpoint) {
    const at = manifests[opts.checkpoint.seq - 1];
    if (opts.checkpoint.seq > 0 && (!at || at.hash !== opts.checkpoint.hash))
      return fail(opts.checkpoint.seq, 'CHECKPOINT_MISMATCH');
  }
  const last = manifests[manifests.length - 1];
  return { ok: true, manifests, head: last ? { seq: last.seq, hash: last.hash } : null };
}

function isManifest(v: unknown): v is Manifest {
  if (!v || typeof v !== 'object') return false;
  const m = v as Record<string, unknown>;
  return (
    m.schema === MANIFEST_SCHEMA &&
    Number.isSafeInteger(m.seq) &&
    (m.seq as number) >= 1 &&
    (m.prev === null || (typeof m.prev === 'string' && HEX64.test(m.prev))) &&
    Array.isArray(m.objects) &&
    m.objects.length > 0 &&
    m.objects.every((o) => typeof o === 'string' && HEX64.test(o)) &&
    typeof m.createdAt === 'string' &&
    Object.keys(m).length === 5
  );
}

export interface AppendResult {
  seq: number;
  hash: string;
  /** false when every object was already named by an existing manifest (idempotent retry). */
  created: boolean;
}

/**
 * Appends one manifest naming `objectIds` (seq = last + 1, prev = hash of the last manifest) under the outbox
 * lock. Objects must already be published and verify. Ids already named by the chain are not named again;
 * if none is new, the existing manifest is returned. Never extends a chain that fails verification.
 */
export async function appendManifest(
  dir: string,
  objectIds: readonly string[],
  opts: { now?: () => Date; hooks?: PublishHooks; lock?: LockOptions } = {},
): Promise<AppendResult> {
  if (objectIds.length === 0) throw new Error('appendManifest: no objects');
  await ensureOutbox(dir);
  for (const id of objectIds) {
    if (!(await readVerifiedObject(dir, id)))
      throw new Error(`appendManifest: object ${id} missing or corrupt`);
  }
  const release = await acquireLock(join(manifestsDir(dir), '.lock'), opts.lock);
  try {
    for (let attempt = 0; attempt < 8; attempt++) {
      const chain = await verifyChain(dir, { objects: false });
      if (!chain.ok)
        throw new Error(`appendManifest: chain broken at ${chain.break.seq}: ${chain.break.reason}`);
      const named = new Map<string, ChainEntry>();
      for (const e of chain.manifests) for (const o of e.manifest.objects) if (!named.has(o)) named.set(o, e);
      const fresh = [...new Set(objectIds)].filter((id) => !named.has(id));
      if (fresh.length === 0) {
        const e = named.get(objectIds[0]!)!;
        return { seq: e.seq, hash: e.hash, created: false };
      }
      const seq = (chain.head?.seq ?? 0) + 1;
      const manifest: Manifest = {
        schema: MANIFEST_SCHEMA,
        seq,
        prev: chain.head?.hash ?? null,
        objects: fresh,
        createdAt: (opts.now?.() ?? new Date()).toISOString(),
      };
      const bytes = Buffer.from(canonicalJson(manifest), 'utf8');
      try {
        await publishFile(manifestsDir(dir), manifestName(seq), bytes, 'manifest', opts.hooks);
      } catch (e) {
        if (e instanceof OutboxConflictError) continue; // another writer took this seq: re-read and retry
        throw e;
      }
      return { seq, hash: sha256Hex(bytes), created: true };
    }
    throw new Error('appendManifest: too much contention');
  } finally {
    await release();
  }
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

/** Reads a published object's bytes after verifying its hash (null when missing or corrupt). */
export async function readObject(dir: string, id: string): Promise<unknown> {
  const bytes = await readVerifiedObject(dir, id);
  return bytes ? (JSON.parse(bytes.toString('utf8')) as unknown) : null;
}

export type BoundedObjectRead =
  { ok: true; bytes: Buffer } | { ok: false; reason: 'missing' | 'corrupt' | 'too-large' };

/**
 * Read-only, memory-bounded object read for the handoff: a file larger than `maxBytes` is refused without
 * reading its content; the bytes returned always hash to `id`. A malformed id reads as missing.
 */
export async function readObjectBounded(
  dir: string,
  id: string,
  maxBytes: number,
): Promise<BoundedObjectRead> {
  if (!HEX64.test(id)) return { ok: false, reason: 'missing' };
  let fh;
  try {
    fh = await open(join(objectsDir(dir), `${id}.json`), 'r');
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
    const bytes = buf.subarray(0, filled);
    return sha256Hex(bytes) === id ? { ok: true, bytes } : { ok: false, reason: 'corrupt' };
  } finally {
    await fh.close();
  }
}

/** Numbers of final record names (temporaries and the lock excluded). Read-only; a missing outbox counts 0. */
export async function countRecords(dir: string): Promise<{ manifests: number; objects: number }> {
  const n = async (sub: string): Promise<number> => {
    try {
      return (await readdir(sub)).filter((name) => !name.startsWith('.')).length;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      return 0;
    }
  };
  return { manifests: await n(manifestsDir(dir)), objects: await n(objectsDir(dir)) };
}
