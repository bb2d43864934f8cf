import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { receiptKey } from '../../src/domain/commands.ts';
import { freshTenant, startApp, type TestApp } from '../support/harness.ts';
import { AWAIT, code, GRANT, propose, who, type Receipt } from '../support/write-attacks.ts';

/**
 * Issue #14 part 4 on the real stack: the `relate` mutation, relations on Record, and the graph arm's
 * walk over structural relations. A record that no query word reaches is found by the graph arm through
 * a relation from a matching record; not when the caller may not see it, not through a record the caller
 * may not see, and not once the relation's validity has ended.
 */

const RELATE = `mutation L($input: RelateInput!) { relate(input: $input) { outcome recordId version reason } }`;
const RECALL = `query Q($input: RecallInput!) { recall(input: $input) { items { record { id } why { arms { arm } } } } }`;
const RELATIONS = `query R($id: ID!) { record(id: $id) { relations { type direction targetId targetKind
  confidence validFrom validTo target { id } targetEntity { name } } } }`;

type Rel = {
  type: string;
  direction: string;
  targetId: string;
  targetKind: string;
  confidence: number;
  validFrom: string | null;
  validTo: string | null;
  target: { id: string } | null;
  targetEntity: { name: string } | null;
};

let app: TestApp;
let tenant: string;
let admin: string;
/** Reads and writes acme/rel up to INTERNAL. */
let ann: string;
const word = `zq${randomUUID().slice(0, 8)}`;
const ids: Record<'seed' | 'part' | 'hidden' | 'middle' | 'far', string> = {
  seed: '',
  part: '',
  hidden: '',
  middle: '',
  far: '',
};

async function rec(text: string, sensitivity = 'INTERNAL', about: string[] = []) {
  const r = await propose(app, admin, {
    namespace: 'acme/rel',
    sensitivity,
    about: about.map((alias) => ({ alias })),
    statement: { subject: `s-${randomUUID().slice(0, 6)}`, predicate: 'notes', object: 'x', text },
  });
  return r.recordId!;
}

const relate = (token: string, input: Record<string, unknown>) =>
  app.gql<{ relate: Receipt }>(token, RELATE, {
    input: { reason: 'test', idempotencyKey: randomUUID(), ...input },
  });

async function ok(token: string, input: Record<string, unknown>) {
  const r = await relate(token, input);
  expect(r.data?.relate, JSON.stringify(r.errors)).toMatchObject({ outcome: 'ADMITTED' });
}

/** Each returned record id with the arms that found it. */
async function recall(token: string): Promise<Map<string, string[]>> {
  const r = await app.gql<{
    recall: { items: Array<{ record: { id: string }; why: { arms: Array<{ arm: string }> } }> };
  }>(token, RECALL, {
    input: { query: word, namespace: 'acme/rel', purpose: 'test', limit: 50, tokenBudget: 20000 },
  });
  expect(r.errors).toBeUndefined();
  return new Map(r.data!.recall.items.map((i) => [i.record.id, i.why.arms.map((a) => a.arm)]));
}

const relations = async (token: string, id: string) =>
  (await app.gql<{ record: { relations: Rel[] } | null }>(token, RELATIONS, { id })).data?.record
    ?.relations ?? [];

beforeAll(async () => {
  app = await startApp(AWAIT);
  tenant = freshTenant('rel');
  admin = await app.token({ tenant, sub: 'root', scopes: ['admin'] });
  ann = await app.token({ tenant, sub: 'ann', scopes: ['read', 'write'] });
  const g = await app.gql<{ grantAccess: { outcome: string } }>(admin, GRANT, {
    input: {
      grantee: { sub: 'ann' },
      namespace: 'acme/rel',
      maxSensitivity: 'INTERNAL',
      reason: 't',
      idempotencyKey: randomUUID(),
    },
  });
  expect(g.data?.grantAccess.outcome).toBe('ADMITTED');
  ids.seed = await rec(`${word} canary deploys roll out in three waves.`, 'INTERNAL', ['checkout-svc']);
  ids.part = await rec('Rollbacks page the on-call engineer.');
  ids.hidden = await rec('The escalation contact list lives in the vault.', 'CONFIDENTIAL');
  ids.middle = await rec('Incident reviews happen every Thursday.', 'CONFIDENTIAL');
  ids.far = await rec('Postmortems are written within five days.');
  await ok(admin, { from: ids.part, to: ids.seed, type: 'PART_OF', confidence: 0.8 });
  await ok(admin, { from: ids.hidden, to: ids.seed, type: 'SUPPORTS' });
  await ok(admin, { from: ids.seed, to: ids.middle, type: 'REFERENCES' });
  await ok(admin, { from: ids.middle, to: ids.far, type: 'CAUSED_BY' });
});
afterAll(async () => app?.stop());

describe('relate and the graph arm', () => {
  it('the graph arm returns records reachable only through structural relations from a matching record', async () => {
    const got = await recall(admin);
    expect(got.get(ids.seed)).toContain('lexical');
    expect(got.get(ids.part)).toContain('graph');
    expect(got.get(ids.hidden)).toContain('graph');
    // two hops, through the CONFIDENTIAL middle record the admin may read
    expect(got.get(ids.far)).toContain('graph');
    for (const id of [ids.part, ids.hidden, ids.far]) expect(got.get(id)).not.toContain('lexical');
  });

  it('leak check: a caller never gets a record it may not see, nor a walk through one', async () => {
    const got = await recall(ann);
    expect(got.get(ids.part)).toContain('graph');
    expect(got.has(ids.hidden)).toBe(false);
    expect(got.has(ids.middle)).toBe(false);
    // `far` is visible to ann, but only reachable through the hidden middle record: not by the graph arm
    expect(got.get(ids.far) ?? []).not.toContain('graph');
    const rels = await relations(ann, ids.seed);
    // of the seed's three relations, only the one to a record ann may read is listed to her
    expect(rels.map((r) => r.targetId)).toEqual([ids.part]);
  });

  it('Record.relations lists type, direction, target, confidence and validity; an entity target too', async () => {
    const entity = (await relations(admin, ids.seed)).length; // before
    const r = await app.gql<{ record: { about: Array<{ id: string }> } }>(
      admin,
      'query A($id: ID!) { record(id: $id) { about { id } } }',
      {
        id: ids.seed,
      },
    );
    const eid = r.data!.record.about[0]!.id;
    await ok(ann, { from: ids.seed, to: eid, targetKind: 'ENTITY', type: 'APPLIES_TO' });
    const rels = await relations(admin, ids.seed);
    expect(rels).toHaveLength(entity + 1);
    expect(rels).toContainEqual(
      expect.objectContaining({
        type: 'PART_OF',
        direction: 'IN',
        targetId: ids.part,
        targetKind: 'RECORD',
        confidence: 0.8,
        validTo: null,
        target: { id: ids.part },
      }),
    );
    expect(rels.find((x) => x.type === 'PART_OF')!.validFrom).not.toBeNull();
    expect(rels).toContainEqual(
      expect.objectContaining({
        type: 'APPLIES_TO',
        targetKind: 'ENTITY',
        targetId: eid,
        targetEntity: { name: 'checkout-svc' },
      }),
    );
  });

  it('relating to a record the caller may not see → NOT_FOUND, nothing appended', async () => {
    const key = `rel-${randomUUID()}`;
    const r = await relate(ann, { from: ids.seed, to: ids.hidden, type: 'REFERENCES', idempotencyKey: key });
    expect(code(r)).toBe('NOT_FOUND');
    expect(await app.m.store.receipt(tenant, receiptKey(who(app, 'ann'), key))).toBeUndefined();
    expect((await relations(admin, ids.seed)).filter((x) => x.targetId === ids.hidden)).toHaveLength(1);
  });

  it('once the relation’s validity has ended the graph arm no longer follows it', async () => {
    await ok(admin, {
      from: ids.part,
      to: ids.seed,
      type: 'PART_OF',
      validFrom: '2020-01-01T00:00:00Z',
      validTo: '2021-01-01T00:00:00Z',
      reason: 'no longer part of the runbook',
    });
    const rels = await relations(admin, ids.part);
    expect(rels.find((x) => x.type === 'PART_OF')?.validTo).toBe('2021-01-01T00:00:00.000Z');
    const got = await recall(admin);
    expect(got.get(ids.part) ?? []).not.toContain('graph');
    expect(got.get(ids.hidden)).toContain('graph');
  });
});
