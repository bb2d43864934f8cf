import { describe, expect, it } from 'vitest';
import { defaultAdmissionPolicy } from '../../src/domain/admission.ts';
import { entityIdFor, type DecideContext, type EntityRef } from '../../src/domain/commands.ts';
import type { EventOf, LedgerEvent } from '../../src/domain/events.ts';
import type { EntityState } from '../../src/domain/fold.ts';
import type { Principal } from '../../src/domain/principal.ts';
import { gate, plan, type Draft, type PlanFacts } from '../../src/ingest/plan.ts';
import { refKey } from '../../src/ingest/plan-entities.ts';
import { draft } from '../support/drafts.ts';
import type { EntityFacts, RelatedCandidate } from '../../src/ports/ingest-lookups.ts';

/*
 * The write path's decide step without a database: Given the facts the gather step would find, When the
 * request's drafts are planned, Then these are the events. Each case changes one fact.
 */

const writer: Principal = {
  iss: 'https://issuer.test',
  sub: 'writer',
  tenant: 'acme',
  scopes: new Set(['read', 'write']) as Principal['scopes'],
  actors: [],
  tokenId: undefined,
  expiresAt: undefined,
};

function context(): DecideContext {
  let n = 0;
  return {
    principal: writer,
    now: new Date('2026-06-01T10:00:00Z'),
    newId: () => `00000000-0000-4000-8000-${(++n).toString(16).padStart(12, '0')}`,
  };
}

const unit = (...xs: number[]): Float32Array => {
  const v = Float32Array.from(xs);
  const n = Math.hypot(...xs);
  return v.map((x) => x / n);
};

const stored = (over: Partial<RelatedCandidate> = {}): RelatedCandidate => ({
  id: '11111111-1111-4111-8111-111111111111',
  namespace: 'acme/svc',
  sensitivity: 'INTERNAL',
  class: 'FACT',
  subject: 'billing',
  predicate: 'stores',
  object: 'postgres',
  text: 'billing stores data in postgres',
  status: 'ACTIVE',
  version: 1,
  confidence: 0.9,
  cosine: 0.99,
  ...over,
});

const entity = (over: Partial<EntityState> = {}): EntityState => ({
  tenant: 'acme',
  id: '22222222-2222-4222-8222-222222222222',
  name: 'Billing',
  type: 'service',
  aliases: ['billing'],
  externalIds: [],
  sameAs: null,
  embedding: null,
  ...over,
});

const noFacts: EntityFacts = { exact: null, nearest: null, defaultIdTaken: false, defaultIdVisible: false };

function run(
  drafts: Draft[],
  facts: Partial<PlanFacts> & { entityFacts?: Array<[EntityRef, EntityFacts]> } = {},
  idempotencyKey = 'k1',
): LedgerEvent[] {
  return plan(
    {
      ctx: context(),
      cmd: { namespace: 'acme/svc', purpose: 'test', idempotencyKey },
      hash: 'a'.repeat(64),
      drafts,
      episodeId: null,
      suffixPrefix: drafts.length > 1 ? '#stmt:' : '',
      admission: defaultAdmissionPolicy,
      modelId: 'test-model',
    },
    {
      vectors: facts.vectors ?? drafts.map(() => undefined),
      nameVectors: facts.nameVectors ?? new Map(),
      related: facts.related ?? drafts.map(() => []),
      entities: new Map((facts.entityFacts ?? []).map(([ref, f]) => [refKey(ref), f])),
    },
  );
}

const ofType = <T extends LedgerEvent['type']>(events: LedgerEvent[], t: T) =>
  events.filter((e): e is EventOf<T> => e.type === t);

describe('plan: relate', () => {
  it('given a stored record with the same wording, a draft reinforces it and proposes nothing', () => {
    const events = run([draft()], { related: [[stored()]] });
    expect(events.map((e) => e.type)).toEqual(['RecordReinforced']);
    expect(ofType(events, 'RecordReinforced')[0]!.payload.recordId).toBe(stored().id);
  });

  it('given nothing stored, a draft is proposed with no relation', () => {
    const events = run([draft()]);
    expect(events.map((e) => e.type)).toEqual(['RecordProposed']);
    expect(ofType(events, 'RecordProposed')[0]!.payload.relation).toBeNull();
  });

  it('given a stored value for the same subject and predicate, another object contradicts it', () => {
    const events = run(
      [
        draft({
          statement: {
            subject: 'billing',
            predicate: 'stores',
            object: 'mysql',
            text: 'billing stores data in mysql',
          },
        }),
      ],
      {
        related: [[stored({ cosine: 0.8 })]],
      },
    );
    expect(ofType(events, 'RecordProposed')[0]!.payload.relation).toMatchObject({
      kind: 'CONTRADICTS',
      target: stored().id,
    });
  });

  it('given a duplicate the new statement may not reinforce (a wider audience), it is proposed instead', () => {
    const events = run([draft({ sensitivity: 'CONFIDENTIAL' })], {
      related: [[stored({ sensitivity: 'INTERNAL' })]],
    });
    expect(events.map((e) => e.type)).toEqual(['RecordProposed']);
  });

  it('an observation never relates, even to an identical stored statement', () => {
    const events = run([draft({ class: 'OBSERVATION' })], { related: [[stored({ class: 'FACT' })]] });
    expect(events.map((e) => e.type)).toEqual(['RecordProposed']);
  });

  it('two identical drafts of one request: the second reinforces the record the first proposes', () => {
    const v = unit(1, 0, 0);
    const events = run([draft(), draft({ index: 1 })], { vectors: [v, v] });
    expect(events.map((e) => e.type)).toEqual(['RecordProposed', 'RecordReinforced']);
    const first = ofType(events, 'RecordProposed')[0]!.payload.recordId;
    expect(ofType(events, 'RecordReinforced')[0]!.payload.recordId).toBe(first);
  });
});

describe('plan: entities', () => {
  const ref: EntityRef = { alias: 'Billing', type: 'service' };
  const about = (events: LedgerEvent[]) => ofType(events, 'RecordProposed')[0]!.payload.about;

  it('given an exact visible match, the record is about it and no entity is created', () => {
    const events = run([draft({ about: [ref] })], { entityFacts: [[ref, { ...noFacts, exact: entity() }]] });
    expect(ofType(events, 'EntityCreated')).toEqual([]);
    expect(about(events)).toEqual([entity().id]);
  });

  it('given nothing, a new entity with the deterministic id of (tenant, type, name)', () => {
    const events = run([draft({ about: [ref] })], { entityFacts: [[ref, noFacts]] });
    const id = entityIdFor('acme', 'service', 'Billing');
    expect(ofType(events, 'EntityCreated').map((e) => e.payload.entityId)).toEqual([id]);
    expect(about(events)).toEqual([id]);
  });

  it('given a neighbour at cosine ≥ 0.92 of the same type, the reference merges into it', () => {
    const nearest = { ...entity({ name: 'Billing service' }), cosine: 0.95 };
    const events = run([draft({ about: [ref] })], { entityFacts: [[ref, { ...noFacts, nearest }]] });
    expect(ofType(events, 'EntityCreated')).toEqual([]);
    expect(about(events)).toEqual([nearest.id]);
  });

  it('given a close neighbour whose identifier differs (payments-v1 / payments-v2), a new entity with a SAME_AS for review', () => {
    const v2: EntityRef = { alias: 'payments-v2', type: 'service' };
    const nearest = { ...entity({ name: 'payments-v1', aliases: ['payments-v1'] }), cosine: 0.97 };
    const events = run([draft({ about: [v2] })], { entityFacts: [[v2, { ...noFacts, nearest }]] });
    const [created] = ofType(events, 'EntityCreated');
    expect(created!.payload).toMatchObject({
      name: 'payments-v2',
      sameAs: { entityId: nearest.id, confidence: 0.97 },
    });
  });

  it('given a neighbour in the SAME_AS band (0.75–0.92), a new entity tentatively the same as it', () => {
    const nearest = { ...entity({ name: 'Invoicing' }), cosine: 0.8 };
    const events = run([draft({ about: [ref] })], { entityFacts: [[ref, { ...noFacts, nearest }]] });
    expect(ofType(events, 'EntityCreated')[0]!.payload.sameAs).toEqual({
      entityId: nearest.id,
      confidence: 0.8,
    });
  });

  it("given the default id taken by an entity the writer cannot see, the writer's entity gets its own id, the same for a retry", () => {
    const taken = (key: string) =>
      ofType(
        run(
          [draft({ about: [ref] })],
          { entityFacts: [[ref, { ...noFacts, defaultIdTaken: true, defaultIdVisible: false }]] },
          key,
        ),
        'EntityCreated',
      ).map((e) => e.payload.entityId);
    const [own] = taken('k1');
    expect(own).not.toBe(entityIdFor('acme', 'service', 'Billing'));
    // A retry of the request (same key and input) names the same entity: no orphan when both land.
    expect(taken('k1')).toEqual([own]);
    // Another request gets another entity of its own.
    expect(taken('k2')).not.toEqual([own]);
  });

  it('given the default id taken by a visible entity the alias lookup missed, it converges on that entity', () => {
    const events = run([draft({ about: [ref] })], {
      entityFacts: [[ref, { ...noFacts, defaultIdTaken: true, defaultIdVisible: true }]],
    });
    expect(ofType(events, 'EntityCreated')).toEqual([]);
    expect(about(events)).toEqual([entityIdFor('acme', 'service', 'Billing')]);
  });

  it('an id the writer cannot see is refused like one that does not exist', () => {
    const byId: EntityRef = { id: '33333333-3333-4333-8333-333333333333' };
    expect(() => run([draft({ about: [byId] })], { entityFacts: [[byId, noFacts]] })).toThrow(
      /no entity with id/,
    );
  });

  it('two drafts naming one new entity create it once; the second is about it', () => {
    const events = run(
      [
        draft({ about: [ref] }),
        draft({
          index: 1,
          about: [ref],
          statement: {
            subject: 'billing',
            predicate: 'owned_by',
            object: 'team a',
            text: 'billing is owned by team a',
          },
        }),
      ],
      { entityFacts: [[ref, noFacts]] },
    );
    expect(ofType(events, 'EntityCreated')).toHaveLength(1);
    const abouts = ofType(events, 'RecordProposed').map((e) => e.payload.about);
    expect(abouts[0]).toEqual(abouts[1]);
  });
});

describe('gate', () => {
  it('refuses a statement outside the length gates and keeps the rest, with the reason', () => {
    const { kept, refused } = gate([draft({ text: 'ok' }), draft({ index: 1 })], {
      maxTextChars: 1000,
      minTextChars: 5,
    });
    expect(kept.map((d) => d.index)).toEqual([1]);
    expect(refused).toEqual(['statement 0: shorter than 5 characters (quality gate)']);
  });
});
