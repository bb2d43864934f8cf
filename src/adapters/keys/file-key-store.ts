import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  fdatasync,
  linkSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { conflict } from '../../domain/errors.ts';
import { writeFileAtomic } from '../files/atomic-file.ts';
import type { KeyState, KeyStore } from '../../ports/key-store.ts';

/**
 * The local binding of the KeyStore port: one file per data key under `<stateDir>/keys/`, named by the
 * SHA-256 of the key id (a file name says nothing about whose key it is), mode 0600.
 * - Create: write a private temp file, then hard-link it to the name. A link never replaces an existing
 *   name, so two processes creating the same key agree on one (the loser reads the winner's).
 * - Destroy: overwrite the key bytes in place with zeros and fsync, then atomically replace the file with
 *   a "destroyed" marker (which also stops the id from ever being created again). On a copy-on-write or
 *   journaling filesystem, or an SSD, the old blocks may survive the overwrite: production binds a KMS.
 * - Cost: only the fsync goes to the thread pool. The other calls on a key's small file (open, write,
 *   close, link, unlink, read) are made synchronously: each is a few microseconds on a local disk, where
 *   the same call made asynchronously cost ~20 µs of CPU in its hop to the pool and back. Creating a key
 *   took ~360 µs of CPU with every call asynchronous and ~150 µs this way (one caller, this machine), and
 *   each new record and entity needs one. Server CPU per write in bench:ledger (hashing, three alternated
 *   pairs): 2.45, 2.95 and 2.46 ms against 3.21, 3.33 and 2.64 (keys held in memory: ~2.1).
 * Keys read for sealing are cached in-process; opening always reads the file, so a key another process
 * destroyed is gone for this one too. The cache keeps the `maxCached` most recently used keys (there is a
 * key per record, entity and episode, so an unbounded cache grew with everything ever written — the soak
 * found it), and each cached key owns its 32 bytes: a small Buffer decoded from base64 is a view into an
 * 8 KiB shared pool slab, which it would keep alive.
 */
export class FileKeyStore implements KeyStore {
  private readonly cache = new Map<string, Uint8Array>();

  constructor(
    private readonly dir: string,
    private readonly maxCached = 4096,
  ) {
    if (!Number.isInteger(maxCached) || maxCached < 0)
      throw new RangeError('maxCached must be a non-negative integer');
  }

  async forSealing(keyIds: readonly string[]): Promise<ReadonlyMap<string, Uint8Array>> {
    const out = new Map<string, Uint8Array>();
    const missing: string[] = [];
    for (const id of new Set(keyIds)) {
      const cached = this.cache.get(id);
      if (!cached) {
        missing.push(id);
        continue;
      }
      // Map order is insertion order: re-inserting marks the key most recently used.
      this.cache.delete(id);
      this.cache.set(id, cached);
      out.set(id, cached);
    }
    // The missing keys' fsyncs overlap in the thread pool rather than wait for one another.
    const made = await Promise.all(missing.map((id) => this.createOrRead(id)));
    missing.forEach((id, i) => {
      this.remember(id, made[i]!);
      out.set(id, made[i]!);
    });
    return out;
  }

  /** How many keys the sealing cache holds now (for tests and diagnostics). */
  get cachedKeys(): number {
    return this.cache.size;
  }

  private remember(id: string, key: Uint8Array): void {
    if (this.maxCached === 0) return;
    this.cache.set(id, key);
    while (this.cache.size > this.maxCached) this.cache.delete(this.cache.keys().next().value!);
  }

  async forOpening(keyId: string): Promise<Uint8Array | null> {
    const f = this.read(keyId);
    return f && 'key' in f ? f.key : null;
  }

  async destroy(keyIds: readonly string[]): Promise<void> {
    for (const id of new Set(keyIds)) {
      this.cache.delete(id);
      const path = await this.madePath(id);
      const fh = await open(path, 'r+').catch(() => null);
      if (fh) {
        try {
          const { size } = await fh.stat();
          await fh.write(Buffer.alloc(size, 0), 0, size, 0);
          await fh.sync();
        } finally {
          await fh.close();
        }
      }
      await writeFileAtomic(path, JSON.stringify({ destroyed: true }), 0o600);
    }
  }

  async state(keyId: string): Promise<KeyState> {
    const f = this.read(keyId);
    return !f ? 'ABSENT' : 'key' in f ? 'ACTIVE' : 'DESTROYED';
  }

  /**
   * The id's key: read when its file exists, else made (written to a private temp file, made durable,
   * then linked to the name: a link never replaces, so of two creators the loser reads the winner's).
   */
  private async createOrRead(id: string, retried = false): Promise<Uint8Array> {
    const existing = this.read(id);
    if (existing && 'key' in existing) return existing.key;
    if (existing) throw conflict('the item was erased: nothing new can be written for it');
    const path = await this.madePath(id);
    const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    const key = new Uint8Array(randomBytes(32));
    let fd: number;
    try {
      fd = openSync(tmp, 'wx', 0o600);
    } catch (e) {
      // Its directory is gone (removed under this process): forget the directories, make it once more.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || retried) throw e;
      this.dirs.clear();
      return this.createOrRead(id, true);
    }
    try {
      writeSync(fd, JSON.stringify({ key: Buffer.from(key).toString('base64') }));
      await datasync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(tmp, path);
      return key; // ours is the file now: no need to read it back
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      try {
        unlinkSync(tmp);
      } catch {
        // already gone: nothing to tidy
      }
    }
    return this.createOrRead(id); // another writer's key won the race: use that one
  }

  private read(id: string): { key: Uint8Array } | { destroyed: true } | null {
    const { path } = this.fileOf(id);
    // Most keys asked for are new ones: a stat that answers "none" costs ~1 µs, a failed read ~8 µs.
    if (!statSync(path, { throwIfNoEntry: false })) return null;
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
    // A file zeroed by a destroy that crashed before its marker landed counts as destroyed.
    const parsed = safeJson(text);
    if (parsed && typeof parsed['key'] === 'string')
      return { key: new Uint8Array(Buffer.from(parsed['key'], 'base64')) };
    return { destroyed: true };
  }

  /** The key's file: its name is the SHA-256 of the id, in one of 256 directories. */
  private fileOf(id: string): { dir: string; path: string } {
    const h = createHash('sha256').update(id).digest('hex');
    const dir = join(this.dir, h.slice(0, 2));
    return { dir, path: join(dir, `${h}.json`) };
  }

  /**
   * The key's file, its directory created first (reads never touch the disk's layout). A directory this
   * process made or found is not asked for again (256 of them at most): every new record's key used to
   * cost a `mkdir` and a `stat`.
   */
  private async madePath(id: string): Promise<string> {
    const { dir, path } = this.fileOf(id);
    if (!this.dirs.has(dir)) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      this.dirs.add(dir);
    }
    return path;
  }
  private readonly dirs = new Set<string>();
}

const datasync = promisify(fdatasync);

function safeJson(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
