/**
 * The append-only outbox protocol, over the records of an `OutboxStore` (src/ports/outbox.ts):
 *
 *   objects/<sha256>.json     content-addressed transcript windows (id = SHA-256 of the stored bytes,
 *                             which are the canonical JSON serialization)
 *   manifests/<seq:12>.json   { schema, seq, prev, objects, createdAt } — seq starts at 1 and increases by
 *                             one; prev is the SHA-256 of the previous manifest's bytes (null for seq 1)
 *
 * Every record is published create-if-absent (the store never replaces a name); a retry of identical bytes
 * finds the existing name and verifies it byte for byte.
 *
 * Forks are impossible even if the lock is broken: a manifest name is created only by `publish`, which fails
 * when another writer got that sequence first; the loser re-reads the chain and retries. The lock only
 * serializes.
 */
import { canonicalJson, sha256Hex } from '../domain/canonical.ts';
import {
  OutboxConflictError,
  type BoundedRead,
  type LockOptions,
  type OutboxRecords,
  type OutboxStore,
  type PublishHooks,
} from '../ports/outbox.ts';

export const MANIFEST_SCHEMA = 'muninn.outbox-manifest/1';

export interface Manifest {
  schema: typeof MANIFEST_SCHEMA;
  seq: number;
  prev: string | null;
  objects: string[];
  createdAt: string;
}

const HEX64 = /^[0-9a-f]{64}$/;
const MANIFEST_NAME = /^(\d{12})\.json$/;
const manifestName = (seq: number): string => `${String(seq).padStart(12, '0')}.json`;

/** Publishes a content-addressed object. Idempotent: identical input yields the same id and verifies the file. */
export async function publishObject(
  outbox: OutboxStore,
  obj: unknown,
  hooks?: PublishHooks,
): Promise<{ id: string; created: boolean }> {
  await outbox.create();
  const bytes = Buffer.from(canonicalJson(obj), 'utf8');
  const id = sha256Hex(bytes);
  const created = await outbox.publish('object', `${id}.json`, bytes, hooks);
  return { id, created };
}

async function readVerifiedObject(outbox: OutboxRecords, id: string): Promise<Buffer | null> {
  if (!HEX64.test(id)) return null;
  try {
    const bytes = await outbox.read('object', `${id}.json`);
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
  outbox: OutboxRecords,
  opts: { objects?: boolean; checkpoint?: { seq: number; hash: string } } = {},
): Promise<ChainResult> {
  const checkObjects = opts.objects ?? true;
  const names = await outbox.list('manifest');
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
    const bytes = await outbox.read('manifest', name);
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
        if (!(await readVerifiedObject(outbox, id))) return fail(expected, 'OBJECT_MISSING_OR_CORRUPT');
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
  outbox: OutboxStore,
  objectIds: readonly string[],
  opts: { now?: () => Date; hooks?: PublishHooks; lock?: LockOptions } = {},
): Promise<AppendResult> {
  if (objectIds.length === 0) throw new Error('appendManifest: no objects');
  await outbox.create();
  for (const id of objectIds) {
    if (!(await readVerifiedObject(outbox, id)))
      throw new Error(`appendManifest: object ${id} missing or corrupt`);
  }
  const release = await outbox.lock(opts.lock);
  try {
    for (let attempt = 0; attempt < 8; attempt++) {
      const chain = await verifyChain(outbox, { objects: false });
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
      let created: boolean;
      try {
        // false: these very bytes were already there (the port's contract), so this call created nothing.
        created = await outbox.publish('manifest', manifestName(seq), bytes, opts.hooks);
      } catch (e) {
        if (e instanceof OutboxConflictError) continue; // another writer took this seq: re-read and retry
        throw e;
      }
      return { seq, hash: sha256Hex(bytes), created };
    }
    throw new Error('appendManifest: too much contention');
  } finally {
    await release();
  }
}

/** Reads a published object's bytes after verifying its hash (null when missing or corrupt). */
export async function readObject(outbox: OutboxRecords, id: string): Promise<unknown> {
  const bytes = await readVerifiedObject(outbox, id);
  return bytes ? (JSON.parse(bytes.toString('utf8')) as unknown) : null;
}

/**
 * Read-only, memory-bounded object read for the handoff: a file larger than `maxBytes` is refused without
 * reading its content; the bytes returned always hash to `id`. A malformed id reads as missing.
 */
export async function readObjectBounded(
  outbox: OutboxRecords,
  id: string,
  maxBytes: number,
): Promise<BoundedRead> {
  if (!HEX64.test(id)) return { ok: false, reason: 'missing' };
  const read = await outbox.readBounded('object', `${id}.json`, maxBytes);
  if (!read.ok) return read;
  return sha256Hex(read.bytes) === id ? read : { ok: false, reason: 'corrupt' };
}

/** Numbers of final record names (temporaries and the lock excluded). Read-only; a missing outbox counts 0. */
export async function countRecords(outbox: OutboxRecords): Promise<{ manifests: number; objects: number }> {
  return { manifests: (await outbox.list('manifest')).length, objects: (await outbox.list('object')).length };
}
