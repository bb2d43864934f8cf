import { describe, expect, it } from 'vitest';
import {
  decidePropose,
  parseCommand,
  ProposeCommand,
  type DecideContext,
} from '../../src/domain/commands.ts';
import { type EventOf, type LedgerEvent } from '../../src/domain/events.ts';
import { decodeEvent, encodeEvent } from '../../src/domain/event-wire.ts';
import {
  evolve,
  proposedRelation,
  type Effect,
  type EntityState,
  type ProjectionView,
  type Receipt,
  type RecordState,
} from '../../src/domain/fold.ts';
import type { Principal } from '../../src/domain/principal.ts';
import { decideRelate, RelateCommand, relationValidAt } from '../../src/domain/relations.ts';

/* Typed relations (issue #14 part 4): the command's rules, the event, and the fold of an explicit relate. */

const principal: Principal = {
  iss: 'https://issuer.test',
  sub: 'alice',
  tenant: 'acme',
  scopes: new Set(['read', 'write']),
  actors: [],
  tokenId: undefined,
  expiresAt: undefined,
};
let n = 0;
const ctx = (minute = 0): DecideContext => ({
  principal,
  now: new Date(Date.UTC(2024, 4, 1, 10, minute)),
  newId: () => `00000000-0000-4000-8000-${(++n).toString(16).padStart(12, '0')}`,
});

class View implements ProjectionView {
  readonly records = new Map<string, RecordState>();
  readonly entities = new Map<string, EntityState>();
  readonly receipts = new Map<string, Receipt>();
  record = (_t: string, id: string) => this.records.get(id);
  entity = (_t: string, id: string) => this.entities.get(id);
  receipt = (_t: string, k: string) => this.receipts.get(k);
  episode = () => undefined;
  grant = () => undefined;
  apply(e: LedgerEvent): Effect {
    const eff = evolve(this, e);
    for (const r of [...(eff.record ? [eff.record] : []), ...(eff.others ?? [])]) this.records.set(r.id, r);
    if (eff.entity) this.entities.set(eff.entity.id, eff.entity);
    if (eff.receipt) this.receipts.set(eff.receipt.idempotencyKey, eff.receipt);
    return eff;
  }
}

function seed(view: View, text: string, about: string[] = []): string {
  const events = decidePropose(
    ctx(),
    parseCommand(ProposeCommand, {
      namespace: 'acme/a',
      class: 'FACT',
      statement: { subject: text, predicate: 'is', object: 'x', text },
      about: about.map((alias) => ({ alias })),
      purpose: 'test',
      idempotencyKey: `k-${++n}`,
    }),
    about.map((alias) => ({ ref: { alias }, existingId: undefined })),
    'ACTIVE',
  );
  for (const e of events) view.apply(e);
  return (events.at(-1) as EventOf<'RecordProposed'>).payload.recordId;
}

const relate = (o: Record<string, unknown>, minute = 1) =>
  decideRelate(
    ctx(minute),
    parseCommand(RelateCommand, { reason: 'because', idempotencyKey: `k-${++n}`, ...o }),
    'acme/a',
  );

describe('RelateCommand', () => {
  const base = { from: 'a', to: 'b', type: 'APPLIES_TO', reason: 'r', idempotencyKey: 'k' };
  it('defaults: a record target, confidence 1, purpose relate', () => {
    expect(parseCommand(RelateCommand, base)).toMatchObject({
      targetKind: 'RECORD',
      confidence: 1,
      purpose: 'relate',
    });
  });
  it('refuses types outside the relate set, entity targets of record-only types, self loops, bad validity', () => {
    expect(() => parseCommand(RelateCommand, { ...base, type: 'SUPERSEDES' })).toThrow(/type/);
    expect(() => parseCommand(RelateCommand, { ...base, type: 'ABOUT' })).toThrow(/type/);
    expect(() => parseCommand(RelateCommand, { ...base, type: 'SUPPORTS', targetKind: 'ENTITY' })).toThrow(
      /may point at an entity/,
    );
    expect(() => parseCommand(RelateCommand, { ...base, to: 'a' })).toThrow(/itself/);
    expect(() =>
      parseCommand(RelateCommand, {
        ...base,
        validFrom: '2024-02-01T00:00:00Z',
        validTo: '2024-01-01T00:00:00Z',
      }),
    ).toThrow(/validTo/);
  });
  it('the event round-trips and defaults validFrom to the decision time', () => {
    const e = relate({ from: 'a', to: 'b', type: 'PART_OF' });
    expect(e.payload).toMatchObject({ validFrom: '2024-05-01T10:01:00.000Z', validTo: null });
    expect(decodeEvent(encodeEvent(e))).toEqual({ ok: true, event: e });
  });
});

describe('relationValidAt', () => {
  it('holds from validFrom (inclusive) to validTo (exclusive); no bounds = always', () => {
    const r = { validFrom: '2024-01-01T00:00:00.000Z', validTo: '2024-06-01T00:00:00.000Z' };
    expect(relationValidAt(r, '2024-01-01T00:00:00.000Z')).toBe(true);
    expect(relationValidAt(r, '2024-06-01T00:00:00.000Z')).toBe(false);
    expect(relationValidAt(r, '2023-12-31T00:00:00.000Z')).toBe(false);
    expect(relationValidAt({}, '2024-01-01T00:00:00.000Z')).toBe(true);
  });
});

describe('fold: RecordRelated', () => {
  it('adds an edge with its confidence and validity; the record keeps its version and status', () => {
    const view = new View();
    const a = seed(view, 'A');
    const b = seed(view, 'B');
    const eff = view.apply(relate({ from: a, to: b, type: 'DERIVED_FROM', confidence: 0.7 }));
    expect(eff.receipt).toMatchObject({ outcome: 'ADMITTED', recordId: a, version: 1 });
    const rels = view.records.get(a)!.relations;
    expect(rels).toEqual([
      expect.objectContaining({
        type: 'DERIVED_FROM',
        target: b,
        confidence: 0.7,
        validFrom: '2024-05-01T10:01:00.000Z',
        validTo: null,
      }),
    ]);
    expect(rels[0]!.targetKind).toBeUndefined();
    expect(view.records.get(a)!.revisions).toHaveLength(1);
  });

  it('relating the same (type, target) again replaces the edge (ending it); another type adds one', () => {
    const view = new View();
    const a = seed(view, 'A');
    const b = seed(view, 'B');
    view.apply(relate({ from: a, to: b, type: 'SUPPORTS' }));
    view.apply(
      relate(
        {
          from: a,
          to: b,
          type: 'SUPPORTS',
          validFrom: '2024-01-01T00:00:00Z',
          validTo: '2024-02-01T00:00:00Z',
        },
        2,
      ),
    );
    view.apply(relate({ from: a, to: b, type: 'REFERENCES' }, 3));
    const rels = view.records.get(a)!.relations;
    expect(rels.map((r) => [r.type, r.validTo])).toEqual([
      ['SUPPORTS', '2024-02-01T00:00:00.000Z'],
      ['REFERENCES', null],
    ]);
  });

  it('an entity target must exist; a missing record or entity → REJECTED, nothing changed', () => {
    const view = new View();
    const a = seed(view, 'A', ['payments']);
    const entity = [...view.entities.keys()][0]!;
    const ok = view.apply(relate({ from: a, to: entity, targetKind: 'ENTITY', type: 'APPLIES_TO' }));
    expect(ok.receipt?.outcome).toBe('ADMITTED');
    expect(view.records.get(a)!.relations[0]).toMatchObject({ targetKind: 'ENTITY', target: entity });
    const missing = view.apply(relate({ from: a, to: 'nope', type: 'PART_OF' }, 2));
    expect(missing).toMatchObject({ receipt: { outcome: 'REJECTED', reason: 'target record not found' } });
    expect(missing.record).toBeUndefined();
  });

  it('a record a rollback undid (REVERTED) cannot start a relation', () => {
    const view = new View();
    const a = seed(view, 'A');
    const b = seed(view, 'B');
    const rec = view.records.get(a)!;
    const last = rec.revisions[rec.revisions.length - 1]!;
    view.records.set(a, {
      ...rec,
      revisions: [...rec.revisions.slice(0, -1), { ...last, status: 'REVERTED' }],
    });
    const eff = view.apply(relate({ from: a, to: b, type: 'SUPPORTS' }));
    expect(eff).toMatchObject({ receipt: { outcome: 'REJECTED', reason: 'record is REVERTED' } });
    expect(view.records.get(a)!.relations).toEqual([]);
  });

  it('a later relate never takes the place of the relation the record was proposed with', () => {
    const view = new View();
    const a = seed(view, 'A');
    const b = seed(view, 'B');
    view.apply(relate({ from: a, to: b, type: 'EXTENDS' }));
    expect(proposedRelation(view.records.get(a)!)).toBeUndefined();
  });
});
