import { describe, expect, it } from 'vitest';
import {
  decidePropose,
  decideRevise,
  parseCommand,
  ProposeCommand,
  ReviseCommand,
  type DecideContext,
} from '../../src/domain/commands.ts';
import { type EventOf, type LedgerEvent } from '../../src/domain/events.ts';
import { decodeEvent, encodeEvent } from '../../src/domain/event-wire.ts';
import {
  currentRevision,
  evolve,
  type Effect,
  type ProjectionView,
  type Receipt,
  type RecordState,
} from '../../src/domain/fold.ts';
import type { Principal } from '../../src/domain/principal.ts';
import { labelChange, reclassify, RECLASSIFIED_NORMATIVE } from '../../src/domain/reclassify.ts';

/* Reclassify and rescope (issue #14 part 3): the pure rules, the fold's revision and the v1 → v2 upcast. */

const who = (sub: string): Principal => ({
  iss: 'https://issuer.test',
  sub,
  tenant: 'acme',
  scopes: new Set(['read', 'write']),
  actors: [],
  tokenId: undefined,
  expiresAt: undefined,
});

let n = 0;
const ctx = (sub = 'alice', minute = 0): DecideContext => ({
  principal: who(sub),
  now: new Date(Date.UTC(2024, 4, 1, 10, minute)),
  newId: () => `00000000-0000-4000-8000-${(++n).toString(16).padStart(12, '0')}`,
});

class View implements ProjectionView {
  readonly records = new Map<string, RecordState>();
  readonly receipts = new Map<string, Receipt>();
  record = (_t: string, id: string) => this.records.get(id);
  receipt = (_t: string, k: string) => this.receipts.get(k);
  entity = () => undefined;
  episode = () => undefined;
  grant = () => undefined;
  apply(e: LedgerEvent): Effect {
    const eff = evolve(this, e);
    for (const r of [...(eff.record ? [eff.record] : []), ...(eff.others ?? [])]) this.records.set(r.id, r);
    if (eff.receipt) this.receipts.set(eff.receipt.idempotencyKey, eff.receipt);
    return eff;
  }
}

function seeded(cls = 'FACT'): { view: View; id: string } {
  const view = new View();
  const [e] = decidePropose(
    ctx(),
    parseCommand(ProposeCommand, {
      namespace: 'acme/a',
      class: cls,
      statement: { subject: 's', predicate: 'p', object: 'o', text: 'S p o.' },
      purpose: 'test',
      idempotencyKey: `k-${++n}`,
    }),
    [],
    'ACTIVE',
  ) as [EventOf<'RecordProposed'>];
  view.apply(e);
  return { view, id: e.payload.recordId };
}

const revise = (c: DecideContext, o: Record<string, unknown>) =>
  decideRevise(
    c,
    parseCommand(ReviseCommand, { purpose: 'test', idempotencyKey: `k-${++n}`, ...o }),
    'acme/a',
  );

describe('labelChange', () => {
  it('orders labels PUBLIC < INTERNAL < CONFIDENTIAL < RESTRICTED', () => {
    expect(labelChange('INTERNAL', 'CONFIDENTIAL')).toBe('RAISE');
    expect(labelChange('RESTRICTED', 'PUBLIC')).toBe('LOWER');
    expect(labelChange('INTERNAL', 'INTERNAL')).toBe('SAME');
    expect(labelChange('INTERNAL', null)).toBe('SAME');
  });
});

describe('reclassify (pure)', () => {
  const base = {
    current: {
      class: 'FACT' as const,
      sensitivity: 'INTERNAL' as const,
      namespace: 'acme/a',
      status: 'ACTIVE' as const,
      proposedBy: 'i|alice',
      proposedVia: [],
    },
    principal: { iss: 'i', sub: 'bob' },
    actors: [],
  };
  it('summarises every change and keeps the reason; no change → no summary', () => {
    const r = reclassify({
      ...base,
      change: { class: 'DECISION', sensitivity: 'CONFIDENTIAL', namespace: 'acme/b', reason: 'wrong team' },
    });
    expect(r.next).toEqual({ class: 'DECISION', sensitivity: 'CONFIDENTIAL', namespace: 'acme/b' });
    expect(r.summary).toBe(
      'class FACT→DECISION; label INTERNAL→CONFIDENTIAL; moved acme/a→acme/b: wrong team',
    );
    expect(r.review).toBeNull();
    const none = reclassify({
      ...base,
      change: { class: null, sensitivity: null, namespace: null, reason: null },
    });
    expect(none.summary).toBeNull();
  });
  it('making a norm sends it to review with the reviser as a party; a retracted-like status keeps its own', () => {
    const r = reclassify({
      ...base,
      change: { class: 'NORMATIVE', sensitivity: null, namespace: null, reason: 'policy' },
    });
    expect(r.review).toMatchObject({ status: 'CANDIDATE', proposedVia: ['i|bob'] });
    expect(r.review!.reason).toContain(RECLASSIFIED_NORMATIVE);
    const superseded = reclassify({
      ...base,
      current: { ...base.current, status: 'SUPERSEDED' },
      change: { class: 'NORMATIVE', sensitivity: null, namespace: null, reason: 'policy' },
    });
    expect(superseded.review).toBeNull();
  });
  it('moving a norm is reviewed again; relabelling it in place is not', () => {
    const norm = { ...base, current: { ...base.current, class: 'NORMATIVE' as const } };
    const moved = reclassify({
      ...norm,
      change: { class: null, sensitivity: null, namespace: 'acme/b', reason: 'x' },
    });
    expect(moved.review?.status).toBe('CANDIDATE');
    const relabelled = reclassify({
      ...norm,
      change: { class: null, sensitivity: 'RESTRICTED', namespace: null, reason: 'x' },
    });
    expect(relabelled.review).toBeNull();
  });
});

describe('fold: a reclassifying revision', () => {
  it('moves and relabels the record as a new revision that says so; id and history kept', () => {
    const { view, id } = seeded();
    const eff = view.apply(
      revise(ctx('alice', 1), {
        id,
        expectedVersion: 1,
        namespace: 'acme/b',
        sensitivity: 'CONFIDENTIAL',
        reason: 'belongs to team b',
      }),
    );
    expect(eff.receipt).toMatchObject({ outcome: 'REVISED', recordId: id, version: 2 });
    const r = view.records.get(id)!;
    expect(r).toMatchObject({ id, namespace: 'acme/b', sensitivity: 'CONFIDENTIAL', class: 'FACT' });
    expect(r.revisions.map((v) => v.version)).toEqual([1, 2]);
    expect(r.revisions[0]!.retiredAt).not.toBeNull();
    expect(currentRevision(r).reason).toBe(
      'label INTERNAL→CONFIDENTIAL; moved acme/a→acme/b: belongs to team b',
    );
    expect(currentRevision(r).status).toBe('ACTIVE');
  });

  it('to NORMATIVE → QUEUED, CANDIDATE, and the reviser cannot approve it alone', () => {
    const { view, id } = seeded();
    const eff = view.apply(
      revise(ctx('bob', 1), { id, expectedVersion: 1, class: 'NORMATIVE', reason: 'make it a rule' }),
    );
    expect(eff.receipt).toMatchObject({ outcome: 'QUEUED', version: 2 });
    const r = view.records.get(id)!;
    expect(currentRevision(r).status).toBe('CANDIDATE');
    expect(r.proposedVia).toContain('https://issuer.test|bob');
    expect(r.reviewReasons[0]).toContain(RECLASSIFIED_NORMATIVE);
    expect(r.approvedAt).toBeNull();
  });

  it('a class, label or namespace change without a reason is refused by the command schema', () => {
    expect(() =>
      parseCommand(ReviseCommand, {
        id: 'x',
        expectedVersion: 1,
        namespace: 'acme/b',
        purpose: 'p',
        idempotencyKey: 'k',
      }),
    ).toThrow(/reason/);
  });
});

describe('RecordRevised v1 → v2', () => {
  it('a v1 revision decodes with class, label, namespace and reason null', () => {
    const e = revise(ctx(), { id: 'r-1', expectedVersion: 1, validTo: '2030-01-01T00:00:00Z' });
    const v1 = JSON.parse(encodeEvent(e)) as Record<string, unknown>;
    const payload = { ...(v1['payload'] as Record<string, unknown>) };
    for (const k of ['class', 'sensitivity', 'namespace', 'reason']) delete payload[k];
    const d = decodeEvent(JSON.stringify({ ...v1, schemaVersion: 1, payload }));
    expect(d.ok).toBe(true);
    expect(d.ok && d.event.schemaVersion).toBe(2);
    expect(d.ok && d.event.payload).toMatchObject({
      class: null,
      sensitivity: null,
      namespace: null,
      reason: null,
    });
  });
});
