import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex } from '../../src/domain/canonical.ts';
import { isMuninnError, type ErrorCode } from '../../src/domain/errors.ts';
import type { Principal, Scope } from '../../src/domain/principal.ts';
import { HandoffService, requireHandoffCaller, type HandoffLimits } from '../../src/handoff/contract.ts';
import {
  LEASE_TTL,
  decideCommit,
  handoffConflictReason,
  initialHandoffState,
  memoryHandoffStateStore,
  parseHandoffState,
  trustChain,
  type HandoffConflictReason,
  type HandoffStateStore,
} from '../../src/handoff/state.ts';
import { appendManifest, fileOutboxReader, publishObject, verifyChain } from '../support/outbox-dir.ts';

const T0 = Date.parse('2025-06-01T12:00:00.000Z');
const SEC = 1000;
const TEXTS = [
  'Synthetic canary: the owl sleeps at dawn (alpha)',
  'Synthetic reply: noted, the owl sleeps (bravo)',
  'Synthetic canary: compost the pears on Tuesday (charlie)',
  'Synthetic reply: Tuesday pears acknowledged (delta)',
  'Synthetic canary: harbour lights turn green (echo)',
  'Synthetic reply: green harbour lights noted (foxtrot)',
];

let dir: string;
let outbox: string;
let t: number;
const clock = { now: () => new Date(t) };
let ids: string[]; // object ids, one per manifest
let hashes: string[]; // manifest hashes by seq - 1
let store: HandoffStateStore;

const windowObject = (i: number): Record<string, unknown> => ({
  schema: 'muninn.transcript-window/1',
  keyId: 'k-test-1',
  source: 'signal',
  ownerRef: `owner-ref-${i}`,
  sessionRef: 'session-ref-1',
  revisionRef: `rev-ref-${i}`,
  after: null,
  messages: [
    { ref: `m-${i}-u`, role: 'user', text: TEXTS[2 * i], at: '2025-05-01T10:00:00.000Z' },
    { ref: `m-${i}-a`, role: 'assistant', text: TEXTS[2 * i + 1], at: '2025-05-01T10:01:00.000Z' },
  ],
  window: { firstAt: '2025-05-01T10:00:00.000Z', lastAt: '2025-05-01T10:01:00.000Z', count: 2 },
});

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'muninn-handoff-'));
  outbox = join(dir, 'outbox');
  t = T0;
  ids = [];
  hashes = [];
  for (let i = 0; i < 3; i++) {
    const { id } = await publishObject(outbox, windowObject(i));
    const m = await appendManifest(outbox, [id], { now: () => new Date(T0 - (3 - i) * 3600 * SEC) });
    ids.push(id);
    hashes.push(m.hash);
  }
  store = memoryHandoffStateStore();
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const service = (limits?: Partial<HandoffLimits>): HandoffService =>
  new HandoffService({
    stream: 'ody-signal',
    outbox: fileOutboxReader(outbox),
    store,
    clock,
    ...(limits ? { limits } : {}),
  });

async function refused(p: Promise<unknown>): Promise<{ code: ErrorCode; details: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    if (!isMuninnError(e)) throw e;
    return { code: e.code, details: { ...e.details } };
  }
  throw new Error('expected a refusal');
}
async function conflictReason(p: Promise<unknown>): Promise<HandoffConflictReason | null> {
  try {
    await p;
  } catch (e) {
    const r = handoffConflictReason(e);
    if (!r) throw e;
    return r;
  }
  throw new Error('expected a conflict');
}

/** Every name under the outbox (dot-files included) with mode, size, mtime and content. */
async function snapshot(): Promise<string> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    const st = await stat(d);
    out.push(`${d} dir ${st.mode} ${st.mtimeMs}`);
    for (const n of (await readdir(d)).sort()) {
      const p = join(d, n);
      const s = await stat(p);
      if (s.isDirectory()) await walk(p);
      else out.push(`${p} ${s.mode} ${s.size} ${s.mtimeMs} ${sha256Hex(await readFile(p))}`);
    }
  };
  await walk(outbox);
  return out.join('\n');
}

const tamper = async (
  sub: 'objects' | 'manifests',
  name: string,
  edit: (s: string) => string,
): Promise<void> => {
  const p = join(outbox, sub, name);
  await writeFile(p, edit(await readFile(p, 'utf8')));
};
const M = (seq: number): string => `${String(seq).padStart(12, '0')}.json`;

describe('health', () => {
  it('reports chain, checkpoint, backlog, lease and counts — and no transcript text', async () => {
    const svc = service();
    const h = await svc.health();
    expect(h).toMatchObject({
      stream: 'ody-signal',
      status: 'ok',
      chain: { verified: true, trustedHead: 3, break: null },
      checkpoint: { seq: 0, committedAt: null, ageMs: null },
      backlog: 3,
      oldestPendingAgeMs: 3 * 3600 * SEC,
      lease: null,
      leaseConflicts: 0,
      checkpointConflicts: 0,
      records: { manifestFiles: 3, objectFiles: 3, namedObjects: 3 },
    });
    const l = await svc.acquireLease({ holder: 'run-a', seq: 1 });
    await svc.commit({ seq: 1, manifestHash: hashes[0]!, leaseId: l.leaseId });
    t += 5 * SEC;
    await svc.acquireLease({ holder: 'run-a', seq: 2, ttlMs: 10 * SEC });
    const h2 = await svc.health();
    expect(h2).toMatchObject({
      checkpoint: { seq: 1, ageMs: 5 * SEC },
      backlog: 2,
      oldestPendingAgeMs: 2 * 3600 * SEC + 5 * SEC,
      lease: { seq: 2, live: true },
    });
    for (const json of [JSON.stringify(h), JSON.stringify(h2)]) {
      for (const text of TEXTS) expect(json).not.toContain(text);
      expect(json).not.toMatch(/owl|pears|harbour|owner-ref|session-ref/);
      expect(json).not.toContain(l.leaseId);
    }
  });

  it('the manifest listing carries integrity metadata only', async () => {
    const json = JSON.stringify(await service().manifests({ after: 0 }));
    for (const text of TEXTS) expect(json).not.toContain(text);
  });
});

describe('manifests', () => {
  it('lists trusted manifests after the checkpoint (or `after`), bounded by `first`', async () => {
    const svc = service({ maxManifests: 2 });
    const page = await svc.manifests();
    expect(page.items.map((m) => [m.seq, m.hash, m.objects])).toEqual([
      [1, hashes[0], [ids[0]]],
      [2, hashes[1], [ids[1]]],
    ]);
    expect(page.items[1]!.prev).toBe(hashes[0]);
    expect(page).toMatchObject({ hasMore: true, trustedHead: 3, chainBreak: null });
    expect((await svc.manifests({ after: 2 })).items.map((m) => m.seq)).toEqual([3]);
    expect((await svc.manifests({ after: 3 })).items).toEqual([]);
    expect((await svc.manifests({ after: 0, first: 1 })).items.map((m) => m.seq)).toEqual([1]);
  });

  it('refuses an oversized or malformed page request', async () => {
    const svc = service({ maxManifests: 2 });
    expect(await refused(svc.manifests({ first: 3 }))).toEqual({
      code: 'BAD_USER_INPUT',
      details: { field: 'first', reason: 'oversized' },
    });
    expect((await refused(svc.manifests({ first: 0 }))).code).toBe('BAD_USER_INPUT');
    expect((await refused(svc.manifests({ after: -1 }))).code).toBe('BAD_USER_INPUT');
    expect((await refused(svc.manifests({ after: 1.5 }))).code).toBe('BAD_USER_INPUT');
    expect((await refused(svc.manifests({ after: 0, extra: 1 } as never))).code).toBe('BAD_USER_INPUT');
  });

  it('a tampered manifest breaks verification and the listing stops before the break', async () => {
    const svc = service();
    await tamper('manifests', M(2), (s) =>
      s.replace(/"createdAt":"[^"]+"/, '"createdAt":"1999-01-01T00:00:00.000Z"'),
    );
    // Manifest 2 still links to 1, but 3 no longer links to the (changed) 2.
    const page = await svc.manifests({ after: 0 });
    expect(page.items.map((m) => m.seq)).toEqual([1, 2]);
    expect(page.chainBreak).toEqual({ seq: 3, reason: 'PREV_HASH_MISMATCH' });
    const r = await refused(svc.manifests({ after: 2 }));
    expect(r).toEqual({
      code: 'CONFLICT',
      details: { reason: 'chain-broken', breakSeq: 3, breakReason: 'PREV_HASH_MISMATCH' },
    });
    expect((await svc.acquireLease({ holder: 'run-a', seq: 1 })).manifestHash).toBe(hashes[0]); // before the break
    const h = await svc.health();
    expect(h).toMatchObject({ status: 'degraded', chain: { verified: false, trustedHead: 2 } });

    await tamper('manifests', M(2), (s) => s.replace('{', '{ '));
    expect((await svc.manifests({ after: 0 })).items.map((m) => m.seq)).toEqual([1]);
    expect((await svc.health()).chain.break).toEqual({ seq: 2, reason: 'NOT_CANONICAL' });
  });

  it('a rewritten committed manifest (checkpoint not in the chain) leaves nothing trusted', async () => {
    const svc = service();
    for (const seq of [1, 2]) {
      const l = await svc.acquireLease({ holder: 'run-a', seq });
      await svc.commit({ seq, manifestHash: hashes[seq - 1]!, leaseId: l.leaseId });
    }
    await tamper('manifests', M(2), (s) =>
      s.replace(/"createdAt":"[^"]+"/, '"createdAt":"1999-01-01T00:00:00.000Z"'),
    );
    expect((await svc.health()).chain).toEqual({
      verified: false,
      trustedHead: 0,
      break: { seq: 2, reason: 'CHECKPOINT_MISMATCH' },
    });
    expect((await refused(svc.manifests({ after: 0 }))).details).toMatchObject({
      reason: 'chain-broken',
      breakSeq: 2,
    });
    expect(await conflictReason(svc.acquireLease({ holder: 'run-a', seq: 3 }))).toBe('chain-broken');
    expect((await refused(svc.window(ids[0]!))).code).toBe('NOT_FOUND');
    expect(await svc.checkpoint()).toMatchObject({ seq: 2, manifestHash: hashes[1] });
  });
});

describe('window', () => {
  it('returns the exact bytes of an object named by a trusted manifest', async () => {
    const w = await service().window(ids[1]!);
    expect(w.seq).toBe(2);
    expect(w.content).toBe(canonicalJson(windowObject(1)));
    expect(sha256Hex(w.content)).toBe(ids[1]);
    expect(w.size).toBe(Buffer.byteLength(w.content));
  });

  it('an object not named by a manifest cannot be read, even though it is a valid object file', async () => {
    const bytes = canonicalJson({ schema: 'muninn.transcript-window/1', stray: TEXTS[0] });
    const strayId = sha256Hex(bytes);
    await writeFile(join(outbox, 'objects', `${strayId}.json`), bytes);
    const svc = service();
    expect(await refused(svc.window(strayId))).toEqual({ code: 'NOT_FOUND', details: {} });
    // Indistinguishable from an id that does not exist at all.
    expect(await refused(svc.window('0'.repeat(64)))).toEqual({ code: 'NOT_FOUND', details: {} });
    expect((await svc.health()).records).toEqual({ manifestFiles: 3, objectFiles: 4, namedObjects: 3 });
  });

  it('a tampered object breaks verification and is not served', async () => {
    await tamper('objects', `${ids[2]}.json`, (s) => s.replace('harbour', 'harb0ur'));
    const svc = service();
    expect(await refused(svc.window(ids[2]!))).toEqual({ code: 'NOT_FOUND', details: {} });
    expect((await svc.health()).chain.break).toEqual({ seq: 3, reason: 'OBJECT_MISSING_OR_CORRUPT' });
    expect((await svc.window(ids[0]!)).seq).toBe(1);
  });

  it('refuses malformed and over-long ids, and objects above the size bound', async () => {
    const svc = service({ maxObjectBytes: 64 });
    expect(await refused(svc.window(`${ids[0]}00`))).toEqual({
      code: 'BAD_USER_INPUT',
      details: { field: 'objectId', reason: 'oversized' },
    });
    expect(await refused(svc.window('x'.repeat(100_000)))).toMatchObject({
      details: { reason: 'oversized' },
    });
    expect(await refused(svc.window(ids[0]!.toUpperCase()))).toMatchObject({
      code: 'BAD_USER_INPUT',
      details: { reason: 'invalid' },
    });
    expect(await refused(svc.window('../manifests/000000000001'))).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(await conflictReason(svc.window(ids[0]!))).toBe('object-too-large');
  });
});

describe('leases', () => {
  it('acquire, renew and expiry with a bounded TTL', async () => {
    const svc = service();
    const a = await svc.acquireLease({ holder: 'run-a', seq: 1, ttlMs: 10 * SEC });
    expect(a).toMatchObject({ seq: 1, holder: 'run-a', manifestHash: hashes[0], renewed: false });
    expect(a.expiresAt).toBe(new Date(T0 + 10 * SEC).toISOString());
    t += 5 * SEC;
    const r = await svc.renewLease({ leaseId: a.leaseId, holder: 'run-a', ttlMs: 10 * SEC });
    expect(r).toMatchObject({
      leaseId: a.leaseId,
      renewed: true,
      expiresAt: new Date(T0 + 15 * SEC).toISOString(),
    });
    t += 10 * SEC; // exactly at expiry: no longer live
    expect(await conflictReason(svc.renewLease({ leaseId: a.leaseId, holder: 'run-a' }))).toBe(
      'lease-expired',
    );
    expect((await svc.health()).lease).toMatchObject({ seq: 1, live: false });
    // Expiry does not advance the checkpoint.
    expect((await svc.checkpoint()).seq).toBe(0);
    const d = await svc.acquireLease({ holder: 'run-a', seq: 1 });
    expect(d.leaseId).not.toBe(a.leaseId);
    expect(d.expiresAt).toBe(new Date(t + LEASE_TTL.defaultMs).toISOString());
    expect((await svc.health()).leaseExpiries).toBe(1);
  });

  it('the same holder re-acquiring its live lease renews it', async () => {
    const svc = service();
    const a = await svc.acquireLease({ holder: 'run-a', seq: 1, ttlMs: 10 * SEC });
    t += 3 * SEC;
    const b = await svc.acquireLease({ holder: 'run-a', seq: 1, ttlMs: 10 * SEC });
    expect(b).toMatchObject({
      leaseId: a.leaseId,
      renewed: true,
      expiresAt: new Date(T0 + 13 * SEC).toISOString(),
    });
  });

  it('competing callers: one holder per sequence; an expired lease can be taken over', async () => {
    const svc = service();
    const other = service();
    const a = await svc.acquireLease({ holder: 'run-a', seq: 1, ttlMs: 10 * SEC });
    expect(await conflictReason(other.acquireLease({ holder: 'run-b', seq: 1 }))).toBe('lease-held');
    expect(await conflictReason(other.renewLease({ leaseId: a.leaseId, holder: 'run-b' }))).toBe(
      'lease-unknown',
    );
    expect(await conflictReason(other.renewLease({ leaseId: 'guess', holder: 'run-a' }))).toBe(
      'lease-unknown',
    );
    t += 11 * SEC;
    const b = await other.acquireLease({ holder: 'run-b', seq: 1 });
    expect(b.holder).toBe('run-b');
    // The old holder's lease is now stale.
    expect(await conflictReason(svc.renewLease({ leaseId: a.leaseId, holder: 'run-a' }))).toBe(
      'lease-unknown',
    );
    expect(await conflictReason(svc.commit({ seq: 1, manifestHash: hashes[0]!, leaseId: a.leaseId }))).toBe(
      'lease-unknown',
    );
    expect(await conflictReason(svc.acquireLease({ holder: 'run-a', seq: 1 }))).toBe('lease-held');
    expect((await svc.health()).leaseConflicts).toBe(6);
  });

  it('concurrent acquires for the same sequence grant exactly one lease', async () => {
    const results = await Promise.allSettled(
      ['run-a', 'run-b', 'run-c', 'run-d'].map((holder) => service().acquireLease({ holder, seq: 1 })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results)
      if (r.status === 'rejected') expect(handoffConflictReason(r.reason)).toBe('lease-held');
  });

  it('acquire is only for the next sequence, and only when its manifest exists', async () => {
    const svc = service();
    expect(await conflictReason(svc.acquireLease({ holder: 'run-a', seq: 2 }))).toBe('not-next-seq');
    for (const seq of [1, 2, 3]) {
      const l = await svc.acquireLease({ holder: 'run-a', seq });
      await svc.commit({ seq, manifestHash: hashes[seq - 1]!, leaseId: l.leaseId });
    }
    expect(await conflictReason(svc.acquireLease({ holder: 'run-a', seq: 4 }))).toBe('unknown-manifest');
    expect(await conflictReason(svc.acquireLease({ holder: 'run-a', seq: 3 }))).toBe('already-committed');
    expect(await conflictReason(svc.acquireLease({ holder: 'run-a', seq: 1 }))).toBe('rewind');
    expect((await svc.health()).checkpointConflicts).toBe(4);
  });

  it('bounds TTL and ids', async () => {
    const svc = service();
    expect(await refused(svc.acquireLease({ holder: 'run-a', seq: 1, ttlMs: LEASE_TTL.minMs - 1 }))).toEqual({
      code: 'BAD_USER_INPUT',
      details: { field: 'ttlMs', reason: 'invalid' },
    });
    expect(await refused(svc.acquireLease({ holder: 'run-a', seq: 1, ttlMs: LEASE_TTL.maxMs + 1 }))).toEqual({
      code: 'BAD_USER_INPUT',
      details: { field: 'ttlMs', reason: 'oversized' },
    });
    expect(await refused(svc.acquireLease({ holder: 'h'.repeat(129), seq: 1 }))).toEqual({
      code: 'BAD_USER_INPUT',
      details: { field: 'holder', reason: 'oversized' },
    });
    expect((await refused(svc.acquireLease({ holder: '', seq: 1 }))).code).toBe('BAD_USER_INPUT');
    expect((await refused(svc.acquireLease({ holder: 'run a', seq: 1 }))).code).toBe('BAD_USER_INPUT');
    expect((await refused(svc.acquireLease({ holder: 'run-a', seq: 0 }))).code).toBe('BAD_USER_INPUT');
    expect(await refused(svc.renewLease({ leaseId: 'l'.repeat(129), holder: 'run-a' }))).toMatchObject({
      details: { field: 'leaseId', reason: 'oversized' },
    });
    const l = await svc.acquireLease({ holder: 'h'.repeat(128), seq: 1, ttlMs: LEASE_TTL.maxMs });
    expect(l.expiresAt).toBe(new Date(T0 + LEASE_TTL.maxMs).toISOString());
  });
});

describe('checkpoint compare-and-swap', () => {
  it('advances 0 → 1, then one at a time; commit releases the lease', async () => {
    const svc = service();
    expect(await svc.checkpoint()).toEqual({ seq: 0, manifestHash: null, committedAt: null });
    for (const seq of [1, 2, 3]) {
      t += SEC;
      const l = await svc.acquireLease({ holder: 'run-a', seq });
      const c = await svc.commit({ seq, manifestHash: hashes[seq - 1]!, leaseId: l.leaseId });
      expect(c).toEqual({
        seq,
        manifestHash: hashes[seq - 1],
        committedAt: new Date(t).toISOString(),
        repeated: false,
      });
      expect(await svc.checkpoint()).toEqual({
        seq,
        manifestHash: hashes[seq - 1],
        committedAt: new Date(t).toISOString(),
      });
      expect((await svc.health()).lease).toBeNull();
      expect(await conflictReason(svc.renewLease({ leaseId: l.leaseId, holder: 'run-a' }))).toBe(
        'lease-unknown',
      );
    }
    expect((await svc.health()).backlog).toBe(0);
  });

  it('stale lease, skip, rewind, changed hash and inconsistent repeats conflict; an exact repeat is idempotent', async () => {
    const svc = service();
    const l1 = await svc.acquireLease({ holder: 'run-a', seq: 1, ttlMs: 10 * SEC });
    // skip
    expect(await conflictReason(svc.commit({ seq: 2, manifestHash: hashes[1]!, leaseId: l1.leaseId }))).toBe(
      'not-next-seq',
    );
    // changed hash (another manifest's, and a made-up one)
    expect(await conflictReason(svc.commit({ seq: 1, manifestHash: hashes[1]!, leaseId: l1.leaseId }))).toBe(
      'hash-mismatch',
    );
    expect(
      await conflictReason(svc.commit({ seq: 1, manifestHash: 'a'.repeat(64), leaseId: l1.leaseId })),
    ).toBe('hash-mismatch');
    // no lease / wrong lease
    expect(
      await conflictReason(svc.commit({ seq: 1, manifestHash: hashes[0]!, leaseId: 'not-a-lease' })),
    ).toBe('lease-unknown');
    // stale (expired) lease
    t += 10 * SEC;
    expect(await conflictReason(svc.commit({ seq: 1, manifestHash: hashes[0]!, leaseId: l1.leaseId }))).toBe(
      'lease-expired',
    );
    expect((await svc.checkpoint()).seq).toBe(0);

    const l1b = await svc.acquireLease({ holder: 'run-a', seq: 1 });
    const c1 = await svc.commit({ seq: 1, manifestHash: hashes[0]!, leaseId: l1b.leaseId });
    // exact repeat (e.g. the response was lost): same checkpoint back, nothing changes
    t += SEC;
    const before = await store.read('ody-signal');
    expect(await svc.commit({ seq: 1, manifestHash: hashes[0]!, leaseId: l1b.leaseId })).toEqual({
      ...c1,
      repeated: true,
    });
    expect(await store.read('ody-signal')).toEqual(before);
    // inconsistent repeats
    expect(await conflictReason(svc.commit({ seq: 1, manifestHash: hashes[0]!, leaseId: l1.leaseId }))).toBe(
      'already-committed',
    );
    expect(
      await conflictReason(svc.commit({ seq: 1, manifestHash: 'b'.repeat(64), leaseId: l1b.leaseId })),
    ).toBe('already-committed');

    const l2 = await svc.acquireLease({ holder: 'run-a', seq: 2 });
    // the lease for seq 2 is not a lease for seq 1, and cannot skip to 3
    expect(await conflictReason(svc.commit({ seq: 3, manifestHash: hashes[2]!, leaseId: l2.leaseId }))).toBe(
      'not-next-seq',
    );
    await svc.commit({ seq: 2, manifestHash: hashes[1]!, leaseId: l2.leaseId });
    // rewind — including a late exact repeat of the commit of seq 1
    expect(await conflictReason(svc.commit({ seq: 1, manifestHash: hashes[0]!, leaseId: l1b.leaseId }))).toBe(
      'rewind',
    );
    expect(await svc.checkpoint()).toMatchObject({ seq: 2, manifestHash: hashes[1] });
    const h = await svc.health();
    expect(h.leaseConflicts).toBe(2);
    expect(h.checkpointConflicts).toBe(7);
  });

  it('an unknown next manifest cannot be committed', async () => {
    const svc = service();
    for (const seq of [1, 2, 3]) {
      const l = await svc.acquireLease({ holder: 'run-a', seq });
      await svc.commit({ seq, manifestHash: hashes[seq - 1]!, leaseId: l.leaseId });
    }
    expect(await conflictReason(svc.commit({ seq: 4, manifestHash: 'c'.repeat(64), leaseId: 'x' }))).toBe(
      'unknown-manifest',
    );
  });

  it('refuses malformed commit input before deciding', async () => {
    const svc = service();
    expect(await refused(svc.commit({ seq: 1, manifestHash: `${hashes[0]}0`, leaseId: 'x' }))).toEqual({
      code: 'BAD_USER_INPUT',
      details: { field: 'manifestHash', reason: 'oversized' },
    });
    expect((await refused(svc.commit({ seq: -1, manifestHash: hashes[0]!, leaseId: 'x' }))).code).toBe(
      'BAD_USER_INPUT',
    );
    expect((await svc.health()).checkpointConflicts).toBe(0);
  });

  it('a restart between lease and commit changes no object, manifest or checkpoint', async () => {
    const first = service();
    const l1 = await first.acquireLease({ holder: 'run-a', seq: 1 });
    await first.commit({ seq: 1, manifestHash: hashes[0]!, leaseId: l1.leaseId });
    const l2 = await first.acquireLease({ holder: 'run-a', seq: 2, ttlMs: 30 * SEC });
    const files = await snapshot();
    const state = await store.read('ody-signal');

    // "Restart": a fresh service over the same persisted state and outbox.
    t += 5 * SEC;
    const second = service();
    expect(await snapshot()).toBe(files);
    expect(await second.checkpoint()).toEqual(await first.checkpoint());
    expect((await second.health()).lease).toEqual({ seq: 2, expiresAt: l2.expiresAt, live: true });
    expect(await conflictReason(second.acquireLease({ holder: 'run-b', seq: 2 }))).toBe('lease-held');
    expect(await store.read('ody-signal')).toEqual({ ...state, leaseConflicts: 1 });
    expect(await snapshot()).toBe(files);

    // The surviving lease still commits, exactly once.
    await second.commit({ seq: 2, manifestHash: hashes[1]!, leaseId: l2.leaseId });
    expect(await second.checkpoint()).toMatchObject({ seq: 2, manifestHash: hashes[1] });
    expect(await snapshot()).toBe(files);
    expect((await verifyChain(outbox)).ok).toBe(true);
  });
});

describe('read-only outbox', () => {
  it('no operation, successful or refused, changes any outbox file or directory', async () => {
    const svc = service({ maxManifests: 2, maxObjectBytes: 100_000 });
    const files = await snapshot();
    const ops: (() => Promise<unknown>)[] = [
      () => svc.health(),
      () => svc.manifests(),
      () => svc.manifests({ first: 3 }),
      () => svc.window(ids[0]!),
      () => svc.window('f'.repeat(64)),
      () => svc.window('nope'),
      () => svc.checkpoint(),
      () => svc.acquireLease({ holder: 'run-a', seq: 2 }),
      () => svc.commit({ seq: 1, manifestHash: hashes[0]!, leaseId: 'nope' }),
    ];
    const l = await svc.acquireLease({ holder: 'run-a', seq: 1, ttlMs: 5 * SEC });
    ops.push(
      () => svc.acquireLease({ holder: 'run-b', seq: 1 }),
      () => svc.renewLease({ leaseId: l.leaseId, holder: 'run-a' }),
      () => svc.commit({ seq: 1, manifestHash: hashes[1]!, leaseId: l.leaseId }),
      () => svc.commit({ seq: 1, manifestHash: hashes[0]!, leaseId: l.leaseId }),
      () => svc.commit({ seq: 1, manifestHash: hashes[0]!, leaseId: l.leaseId }),
      () => svc.commit({ seq: 1, manifestHash: hashes[1]!, leaseId: l.leaseId }),
      () => svc.acquireLease({ holder: 'run-a', seq: 2 }),
      () => svc.health(),
    );
    for (const op of ops) {
      await op().catch(() => undefined);
      expect(await snapshot()).toBe(files);
    }
    expect((await svc.checkpoint()).seq).toBe(1);
  });

  it('does not create a missing outbox', async () => {
    const empty = join(dir, 'absent');
    const svc = new HandoffService({ stream: 's', outbox: fileOutboxReader(empty), store, clock });
    expect(await svc.health()).toMatchObject({
      status: 'ok',
      backlog: 0,
      records: { manifestFiles: 0, objectFiles: 0 },
    });
    expect(await svc.manifests()).toMatchObject({ items: [], hasMore: false });
    expect(await conflictReason(svc.acquireLease({ holder: 'run-a', seq: 1 }))).toBe('unknown-manifest');
    await expect(stat(empty)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('state and decisions', () => {
  it('the memory store serializes transactions', async () => {
    const s = memoryHandoffStateStore();
    await Promise.all(
      Array.from({ length: 20 }, () =>
        s.transact('x', (st) => ({ next: { ...st, leaseConflicts: st.leaseConflicts + 1 }, result: null })),
      ),
    );
    expect((await s.read('x')).leaseConflicts).toBe(20);
    expect(await s.read('y')).toEqual(initialHandoffState('y'));
    // A throwing transaction changes nothing and does not wedge the queue.
    await expect(
      s.transact('x', () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect((await s.read('x')).leaseConflicts).toBe(20);
  });

  it('decideCommit is pure: an exact repeat writes nothing, a conflict only counts', async () => {
    const raw = await verifyChain(outbox);
    const now = new Date(T0);
    const state = {
      ...initialHandoffState('s'),
      checkpoint: {
        seq: 1,
        manifestHash: hashes[0]!,
        committedAt: new Date(T0).toISOString(),
        leaseId: 'L1',
      },
    };
    const chain = trustChain(raw, state.checkpoint);
    const frozen = structuredClone(state);
    expect(
      decideCommit(state, { seq: 1, manifestHash: hashes[0]!, leaseId: 'L1' }, now, chain),
    ).toMatchObject({
      ok: true,
      next: null,
      result: { repeated: true },
    });
    const d = decideCommit(state, { seq: 1, manifestHash: hashes[0]!, leaseId: 'L2' }, now, chain);
    expect(d).toMatchObject({ ok: false, reason: 'already-committed', next: { checkpointConflicts: 1 } });
    expect(state).toEqual(frozen);
  });

  it('parseHandoffState accepts what the service persists and rejects damage', async () => {
    const svc = service();
    const l = await svc.acquireLease({ holder: 'run-a', seq: 1 });
    await svc.commit({ seq: 1, manifestHash: hashes[0]!, leaseId: l.leaseId });
    await svc.acquireLease({ holder: 'run-a', seq: 2 });
    const persisted = JSON.parse(JSON.stringify(await store.read('ody-signal'))) as unknown;
    expect(parseHandoffState(persisted)).toEqual(persisted);
    expect(() => parseHandoffState({ ...(persisted as object), leaseConflicts: -1 })).toThrow();
    expect(() =>
      parseHandoffState({
        ...initialHandoffState('s'),
        checkpoint: { ...initialHandoffState('s').checkpoint, seq: 1 },
      }),
    ).toThrow();
  });
});

describe('requireHandoffCaller', () => {
  const principal = (scopes: Scope[]): Principal => ({
    iss: 'https://issuer',
    sub: 'heimdall',
    tenant: 't',
    scopes: new Set(scopes),
    actors: [],
    tokenId: undefined,
    expiresAt: undefined,
  });
  it('admits only the explicit handoff scope', () => {
    expect(requireHandoffCaller(principal(['handoff'])).sub).toBe('heimdall');
    expect(() => requireHandoffCaller(principal(['admin']))).toThrow(
      expect.objectContaining({ code: 'FORBIDDEN' }),
    );
    expect(() => requireHandoffCaller(undefined)).toThrow(
      expect.objectContaining({ code: 'UNAUTHENTICATED' }),
    );
  });
});
