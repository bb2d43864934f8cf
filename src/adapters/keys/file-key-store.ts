import { createHash, randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
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
    for (const id of new Set(keyIds)) {
      const cached = this.cache.get(id);
      if (cached) {
        // Map order is insertion order: re-inserting marks the key most recently used.
        this.cache.delete(id);
        this.cache.set(id, cached);
        out.set(id, cached);
        continue;
      }
      const key = await this.createOrRead(id);
      this.remember(id, key);
      out.set(id, key);
    }
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
    const f = await this.read(keyId);
    return f && 'key' in f ? f.key : null;
  }

  async destroy(keyIds: readonly string[]): Promise<void> {
    for (const id of new Set(keyIds)) {
      this.cache.delete(id);
      const path = await this.pathOf(id, true);
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
    const f = await this.read(keyId);
    return !f ? 'ABSENT' : 'key' in f ? 'ACTIVE' : 'DESTROYED';
  }

  private async createOrRead(id: string, retried = false): Promise<Uint8Array> {
    const existing = await this.read(id);
    if (existing && 'key' in existing) return existing.key;
    if (existing) throw conflict('the item was erased: nothing new can be written for it');
    const path = await this.pathOf(id, true);
    const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    const key = new Uint8Array(randomBytes(32));
    const fh = await open(tmp, 'wx', 0o600).catch((e: NodeJS.ErrnoException) => {
      // Its directory is gone (removed under this process): forget the directories, make it once more.
      if (e.code !== 'ENOENT' || retried) throw e;
      this.dirs.clear();
      return null;
    });
    if (!fh) return this.createOrRead(id, true);
    try {
      await fh.writeFile(JSON.stringify({ key: Buffer.from(key).toString('base64') }));
      await fh.sync();
    } finally {
      await fh.close();
    }
    try {
      await link(tmp, path);
      return key; // ours is the file now: no need to read it back
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      await unlink(tmp).catch(() => undefined);
    }
    return this.createOrRead(id); // another writer's key won the race: use that one
  }

  private async read(id: string): Promise<{ key: Uint8Array } | { destroyed: true } | null> {
    let text: string;
    try {
      text = await readFile(await this.pathOf(id), 'utf8');
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

  /**
   * The key's file (its directory created first when `create`: reads never touch the disk's layout). A
   * directory this process made or found is not asked for again (256 of them at most): every new record's
   * key used to cost a `mkdir` and a `stat`.
   */
  private async pathOf(id: string, create = false): Promise<string> {
    const h = createHash('sha256').update(id).digest('hex');
    const d = join(this.dir, h.slice(0, 2));
    if (create && !this.dirs.has(d)) {
      await mkdir(d, { recursive: true, mode: 0o700 });
      this.dirs.add(d);
    }
    return join(d, `${h}.json`);
  }
  private readonly dirs = new Set<string>();
}

function safeJson(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
