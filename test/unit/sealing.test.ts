import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileKeyStore } from '../../src/adapters/keys/file-key-store.ts';
import { LedgerEvent } from '../../src/domain/events.ts';
import { MemoryState } from '../../src/domain/memory-state.ts';
import { ERASED_MARK, keyIdOf } from '../../src/domain/sealing.ts';
import { openEvent, sealEvents } from '../../src/lifecycle/sealing.ts';

/*
 * Crypto-shredding on the wire: what a sealed event shows in clear, that it opens back to itself, and
 * that a replay whose keys are gone folds (with the tombstones) to exactly the live state.
 */

const TENANT = 'acme';
const SECRET = 'Zelda Quackenbush';
let n = 0;
const id = () => `00000000-0000-4000-8000-${(++n).toString(16).padStart(12, '0')}`;

function env(type: string, idem: string, minute: number, namespace = 'acme/hr') {
  return {
    eventId: id(),
    type,
    schemaVersion: 1,
    tenant: TENANT,
    namespace,
    idempotencyKey: idem,
    commandHash: 'a'.repeat(64),
    principal: { iss: 'https://issuer.test', sub: 'writer' },
    actors: [],
    purpose: 'test',
    changesetId: null,
    recordedAt: new Date(Date.UTC(2026, 0, 1, 10, minute)).toISOString(),
  };
}

const stmt = (object: string) => ({
  subject: SECRET,
  predicate: 'lives_in',
  object,
  text: `${SECRET} lives in ${object}.`,
});

function history(): LedgerEvent[] {
  const rec = id();
  const other = id();
  const ep = id();
  const ent = id();
  const proposed = (recordId: string, object: string, minute: number, relation: unknown = null) => ({
    ...env('RecordProposed', `k-${recordId}`, minute),
    payload: {
      recordId,
      class: 'FACT',
      statement: stmt(object),
      about: [ent],
      sensitivity: 'CONFIDENTIAL',
      confidence: 0.8,
      validFrom: '2025-01-01T00:00:00.000Z',
      validTo: null,
      timeSource: 'STATED',
      status: 'ACTIVE',
      rationale: `told by ${SECRET}`,
      sources: [{ episodeId: ep, start: 0, end: 20, label: SECRET }],
      ext: { 'hr:badge': SECRET },
      relation,
      embedding: { modelId: 'm', vector: [0.1, 0.2, 0.3] },
    },
  });
  const events = [
    {
      ...env('EpisodeStored', 'k-ep', 1),
      payload: {
        episodeId: ep,
        source: 'chat',
        occurredAt: '2026-01-01T09:00:00.000Z',
        text: `${SECRET}: I moved to Oslo.`,
        turns: [{ index: 0, role: 'user', speaker: SECRET, start: 0, end: 28, label: null }],
        chunks: [{ index: 0, start: 0, end: 28 }],
        sensitivity: 'CONFIDENTIAL',
        secretRefs: [],
        flags: [],
      },
    },
    {
      ...env('EntityCreated', 'k-ent', 2),
      payload: { entityId: ent, name: SECRET, type: 'person', aliases: ['zelda q'], externalIds: ['emp-7'] },
    },
    proposed(rec, 'Bergen', 3),
    {
      ...env('RecordRevised', 'k-rev', 4),
      schemaVersion: 2,
      payload: {
        recordId: rec,
        expectedVersion: 1,
        statement: stmt('Tromsø'),
        validFrom: null,
        validTo: null,
      },
    },
    proposed(other, 'Oslo', 5, {
      kind: 'SUPERSEDES',
      target: rec,
      confidence: 0.9,
      reason: `supersedes: ${SECRET} moved to "Oslo"`,
    }),
    {
      ...env('RecordRetracted', 'k-ret', 6),
      payload: { recordId: other, expectedVersion: 1, reason: `${SECRET} asked us to` },
    },
  ].map((e) => LedgerEvent.parse(e));
  return [...events, rollback(events, [rec, 'Bergen', 'RESTORE'], [other, 'Oslo', 'REVERT'])];
}

/** A rollback restoring each record's words (`object`): every compensation carries one record's text. */
function rollback(events: readonly LedgerEvent[], ...plan: Array<[string, string, 'RESTORE' | 'REVERT']>) {
  const state = fold(events).changes();
  const compensations = plan.map(([recordId, object, action]) => ({
    recordId,
    expectedVersion: state.records.find((r) => r.id === recordId)!.revisions.at(-1)!.version,
    action,
    target: {
      statement: stmt(object),
      status: action === 'REVERT' ? 'REVERTED' : 'ACTIVE',
      validFrom: '2025-01-01T00:00:00.000Z',
      validTo: null,
      approvals: [],
      approvedAt: null,
      embedding: action === 'RESTORE' ? { modelId: 'm', vector: [0.4, 0.5, 0.6] } : null,
    },
    reason: `${action.toLowerCase()}d by rollback: wrong move`,
  }));
  return LedgerEvent.parse({
    ...env('RolledBack', 'k-rollback', 7),
    payload: {
      rollbackId: id(),
      target: { kind: 'CHANGESET', changesetId: 'cs-1' },
      reason: 'wrong move',
      compensations,
      taints: [],
    },
  });
}

function tombstones(events: readonly LedgerEvent[]): LedgerEvent[] {
  const items: Array<[string, string]> = [];
  for (const e of events) {
    if (e.type === 'RecordProposed') items.push(['RECORD', e.payload.recordId]);
    if (e.type === 'EntityCreated') items.push(['ENTITY', e.payload.entityId]);
    if (e.type === 'EpisodeStored') items.push(['EPISODE', e.payload.episodeId]);
  }
  return items
    .map(([target, item], i) => ({
      ...env('Erased', `k-erase#${i}`, 10 + i),
      payload: { target, id: item, erasureId: 'e-1', reason: 'GDPR art. 17 request' },
    }))
    .map((e) => LedgerEvent.parse(e));
}

const fold = (events: readonly LedgerEvent[]) => {
  const s = new MemoryState();
  for (const e of events) s.apply(e);
  return s;
};

const keysIn = (events: readonly LedgerEvent[]) =>
  events.flatMap((e) =>
    e.type === 'Erased' || e.type === 'RolledBack'
      ? []
      : [
          keyIdOf(
            TENANT,
            e.type === 'EntityCreated' ? 'entity' : e.type === 'EpisodeStored' ? 'episode' : 'record',
            'recordId' in e.payload && e.payload.recordId
              ? e.payload.recordId
              : 'entityId' in e.payload
                ? e.payload.entityId
                : (e.payload as { episodeId: string }).episodeId,
          ),
        ],
  );

describe('sealing the ledger', () => {
  it('the wire holds no personal field in clear, and opens back to the very event', async () => {
    const keys = new FileKeyStore(mkdtempSync(join(tmpdir(), 'keys-')));
    const events = history();
    const wire = await sealEvents(events, keys);
    for (const w of wire) expect(w).not.toMatch(/Zelda|Quackenbush|zelda|Oslo|Bergen|Tromsø|emp-7/);
    const opened = await Promise.all(wire.map((w) => openEvent(w, keys)));
    expect(opened.map((o) => (o.ok ? o.event : o))).toEqual(events);
  });

  it('a sealed part moved onto another event does not open', async () => {
    const keys = new FileKeyStore(mkdtempSync(join(tmpdir(), 'keys-')));
    const [a, b] = (await sealEvents(history().slice(2, 4), keys)).map(
      (w) => JSON.parse(w) as Record<string, unknown>,
    );
    const forged = JSON.stringify({ ...b, sealed: a!['sealed'] });
    expect(await openEvent(forged, keys)).toMatchObject({ ok: false });
  });

  it('a key this store never held is refused as retryable UNAVAILABLE, never opened as if erased', async () => {
    const sealedWith = new FileKeyStore(mkdtempSync(join(tmpdir(), 'keys-')));
    const elsewhere = new FileKeyStore(mkdtempSync(join(tmpdir(), 'keys-')));
    const [w] = await sealEvents(history().slice(0, 1), sealedWith);
    const err = await openEvent(w!, elsewhere).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'UNAVAILABLE', retryable: true });
    expect(String((err as Error).message)).toMatch(/MUNINN_KEY_DIR/);
  });

  it('keys destroyed: the replay folds, with the tombstones, to exactly the live state', async () => {
    const keys = new FileKeyStore(mkdtempSync(join(tmpdir(), 'keys-')));
    const events = history();
    const all = [...events, ...tombstones(events)];
    const live = fold(all);
    const wire = await sealEvents(all, keys);
    await keys.destroy(keysIn(events));
    const replayed = await Promise.all(wire.map((w) => openEvent(w, keys)));
    const shredded = replayed.map((o) => {
      if (!o.ok) throw new Error(o.reason);
      return o.event;
    });
    expect(JSON.stringify(shredded)).not.toMatch(/Zelda|Quackenbush|Oslo|Bergen|Tromsø|emp-7/);
    const replay = fold(shredded);
    expect(replay.changes()).toEqual(live.changes());
    expect(JSON.stringify(live.changes())).not.toMatch(/Zelda|Quackenbush|Oslo|Bergen|Tromsø|emp-7/);
    const rec = live.changes().records[0]!;
    expect(rec.revisions.at(-1)).toMatchObject({ status: 'ERASED' });
    expect(rec.revisions.every((v) => v.statement.text === ERASED_MARK)).toBe(true);
  });

  it("a rollback seals each record's restored words under that record's key: erasing one leaves the other", async () => {
    const keys = new FileKeyStore(mkdtempSync(join(tmpdir(), 'keys-')));
    const events = history();
    const rolled = events.at(-1)!;
    const [wire] = await sealEvents([rolled], keys);
    const sent = JSON.parse(wire!) as {
      sealedParts: Array<{ keyId: string }>;
      payload: { compensations: Array<{ target: { embedding: unknown } }> };
    };
    const parts = sent.sealedParts;
    expect(sent.payload.compensations.map((c) => c.target.embedding)).toEqual([null, null]);
    const [rec, other] =
      rolled.type === 'RolledBack' ? rolled.payload.compensations.map((c) => c.recordId) : [];
    expect(parts.map((p) => p.keyId)).toEqual([
      keyIdOf(TENANT, 'record', rec!),
      keyIdOf(TENANT, 'record', other!),
    ]);
    await keys.destroy([keyIdOf(TENANT, 'record', rec!)]);
    const opened = await openEvent(wire!, keys);
    if (!opened.ok || opened.event.type !== 'RolledBack') throw new Error('does not open');
    const [gone, kept] = opened.event.payload.compensations.map((c) => c.target!.statement.text);
    expect(gone).toBe(ERASED_MARK);
    expect(opened.event.payload.compensations[0]!.target!.embedding).toBeNull();
    expect(kept).toBe(`${SECRET} lives in Oslo.`);
  });

  it('a rollback part moved to another compensation, repeated or dropped does not open', async () => {
    const keys = new FileKeyStore(mkdtempSync(join(tmpdir(), 'keys-')));
    const [wire] = await sealEvents(history().slice(-1), keys);
    const w = JSON.parse(wire!) as { sealedParts: unknown[] };
    const [a, b] = w.sealedParts;
    expect(await openEvent(wire!, keys)).toMatchObject({ ok: true });
    for (const parts of [[b, a], [b, b], [a]])
      expect(await openEvent(JSON.stringify({ ...w, sealedParts: parts }), keys)).toMatchObject({
        ok: false,
      });
  });

  it('a destroyed key is never re-created: nothing new can be sealed for an erased item', async () => {
    const keys = new FileKeyStore(mkdtempSync(join(tmpdir(), 'keys-')));
    const [ep] = history();
    await sealEvents([ep!], keys);
    const keyId = keysIn([ep!])[0]!;
    expect(await keys.state(keyId)).toBe('ACTIVE');
    await keys.destroy([keyId]);
    expect(await keys.state(keyId)).toBe('DESTROYED');
    await expect(sealEvents([ep!], keys)).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('the sealing cache keeps the most recently used keys only, each owning its own bytes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-'));
    const keys = new FileKeyStore(dir, 2);
    const first = await keys.forSealing(['k1', 'k2']);
    await keys.forSealing(['k1']); // k1 is now the most recent; k2 the least
    const after = await keys.forSealing(['k3']);
    expect(keys.cachedKeys).toBe(2);
    for (const k of [...first.values(), ...after.values()]) {
      expect(k.byteLength).toBe(32);
      expect(k.buffer.byteLength).toBe(32);
    }
    // k2 was evicted: asked again, it is read from its file — which another store has since destroyed.
    await new FileKeyStore(dir).destroy(['k2']);
    await expect(keys.forSealing(['k2'])).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(keys.cachedKeys).toBe(2);
  });
});
