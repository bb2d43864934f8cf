import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshTenant, PROPOSE, RETRACT, startApp, type TestApp } from '../support/harness.ts';

/**
 * The analysts' competency queries on both time axes, against hand-written expectations: a small history
 * in one namespace (four records; then a supersession, a retraction and a new decision), asked as known at
 * system times K1 (before the changes) and K2 (after), and as valid at world times before and after one
 * record expired. Every count is also checked against `records(filter, asOf).totalCount`.
 */

const COUNTS = `query C($f: RecordFilter!, $asOf: AsOf) { recordCounts(filter: $f, asOf: $asOf) {
  total byClass { key count } byStatus { key count } byPredicate { key count } byEntity { entity { name } count } } }`;
const TOTAL = `query T($f: RecordFilter!, $asOf: AsOf) { records(filter: $f, asOf: $asOf, first: 1) { totalCount } }`;
const HOOD = `query N($e: EntityRefInput!, $ns: String!, $st: [RecordStatus!], $asOf: AsOf) {
  neighbourhood(entity: $e, namespace: $ns, statuses: $st, asOf: $asOf) {
    entity { name } records(first: 50) { totalCount nodes { id status } } relations { from type to } } }`;
const CHANGES = `query X($f: ChangeFilter!, $from: DateTime!, $to: DateTime!, $first: Int, $after: String) {
  changes(filter: $f, from: $from, to: $to, first: $first, after: $after) {
    totalCount counts { key count } pageInfo { hasNextPage endCursor }
    nodes { kind at record { id } revision { version status } } } }`;

const ALL = ['CANDIDATE', 'ACTIVE', 'CONTESTED', 'SUPERSEDED', 'RETRACTED', 'REJECTED', 'ARCHIVED', 'ERASED'];
const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();
const tick = () => new Promise((r) => setTimeout(r, 5));

type Bucket = { key: string; count: number };
type Counts = {
  total: number;
  byClass: Bucket[];
  byStatus: Bucket[];
  byPredicate: Bucket[];
  byEntity: Array<{ entity: { name: string }; count: number }>;
};
type Receipt = { outcome: string; recordId: string; version: number };

let app: TestApp;
let writer: string;
let reader: string;
const ns = `shop-${randomUUID().slice(0, 6)}`;
const id: Record<'A' | 'B' | 'C' | 'D' | 'E' | 'F', string> = { A: '', B: '', C: '', D: '', E: '', F: '' };
let K0: string;
let K1: string;
let K2: string;

async function propose(input: Record<string, unknown>): Promise<Receipt> {
  const r = await app.gql<{ propose: Receipt }>(writer, PROPOSE, {
    input: { namespace: ns, purpose: 'test', idempotencyKey: randomUUID(), ...input },
  });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data!.propose;
}
const stmt = (subject: string, predicate: string, object: string) => ({
  subject,
  predicate,
  object,
  text: `${subject} ${predicate} ${object}.`,
});

beforeAll(async () => {
  app = await startApp();
  const tenant = freshTenant('asof');
  writer = await app.token({ tenant, sub: 'writer', scopes: ['read', 'write'] });
  reader = await app.token({ tenant, sub: 'analyst', scopes: ['read'] });
  K0 = new Date().toISOString();
  await tick();
  const queue = [{ alias: 'queue-svc', type: 'service' }];
  id.A = (
    await propose({
      class: 'FACT',
      statement: stmt('queue-svc', 'runs on', 'rabbitmq'),
      about: queue,
      validFrom: ago(100),
    })
  ).recordId;
  id.B = (
    await propose({
      class: 'PREFERENCE',
      statement: stmt('the team', 'prefers', 'tabs'),
      validFrom: ago(100),
    })
  ).recordId;
  id.C = (
    await propose({
      class: 'CONSTRAINT',
      statement: stmt('the ledger db', 'must be', 'postgres'),
      validFrom: ago(100),
      validTo: ago(50),
    })
  ).recordId;
  const d = await propose({
    class: 'FACT',
    statement: stmt('sessions', 'live in', 'a redis cluster'),
    about: [{ alias: 'Redis cluster', type: 'datastore' }],
    validFrom: ago(100),
  });
  id.D = d.recordId;
  await tick();
  K1 = new Date().toISOString();
  await tick();
  const e = await propose({
    class: 'FACT',
    statement: { ...stmt('queue-svc', 'runs on', 'kafka'), text: 'queue-svc now runs on kafka.' },
    about: queue,
  });
  expect(e.outcome).toBe('SUPERSEDED');
  id.E = e.recordId;
  const x = await app.gql<{ retract: Receipt }>(writer, RETRACT, {
    input: {
      id: id.D,
      expectedVersion: d.version,
      reason: 'moved to memcached',
      idempotencyKey: randomUUID(),
    },
  });
  expect(x.data?.retract.outcome, JSON.stringify(x.errors)).toBe('RETRACTED');
  id.F = (
    await propose({
      class: 'DECISION',
      statement: stmt('releases', 'follow', 'trunk-based development'),
      rationale: 'Fewer merge conflicts.',
    })
  ).recordId;
  await tick();
  K2 = new Date().toISOString();
});
afterAll(async () => app?.stop());

const hist = (bs: Bucket[]) => Object.fromEntries(bs.map((b) => [b.key, b.count]));

async function counts(asOf: Record<string, string> | undefined, statuses?: string[]) {
  const f = { namespace: ns, ...(statuses ? { statuses } : {}) };
  const r = await app.gql<{ recordCounts: Counts }>(reader, COUNTS, { f, asOf });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  const t = await app.gql<{ records: { totalCount: number } }>(reader, TOTAL, { f, asOf });
  const c = r.data!.recordCounts;
  // the same filter, scope and time axes as the listing
  expect(c.total).toBe(t.data!.records.totalCount);
  return {
    total: c.total,
    byClass: hist(c.byClass),
    byStatus: hist(c.byStatus),
    byPredicate: hist(c.byPredicate),
    byEntity: Object.fromEntries(c.byEntity.map((b) => [b.entity.name, b.count])),
  };
}

describe('recordCounts as of either time axis', () => {
  it('system time: as known at K1 (before the changes) and K2 (after), all statuses', async () => {
    expect(await counts({ knownAt: K1 }, ALL)).toEqual({
      total: 4,
      byClass: { CONSTRAINT: 1, FACT: 2, PREFERENCE: 1 },
      byStatus: { ACTIVE: 4 },
      byPredicate: { 'live in': 1, 'must be': 1, prefers: 1, 'runs on': 1 },
      byEntity: { 'queue-svc': 1, 'Redis cluster': 1 },
    });
    const now = {
      total: 6,
      byClass: { CONSTRAINT: 1, DECISION: 1, FACT: 3, PREFERENCE: 1 },
      byStatus: { ACTIVE: 4, RETRACTED: 1, SUPERSEDED: 1 },
      byPredicate: { follow: 1, 'live in': 1, 'must be': 1, prefers: 1, 'runs on': 2 },
      byEntity: { 'queue-svc': 2, 'Redis cluster': 1 },
    };
    expect(await counts({ knownAt: K2 }, ALL)).toEqual(now);
    expect(await counts(undefined, ALL)).toEqual(now);
    // before anything was recorded: nothing
    expect((await counts({ knownAt: K0 }, ALL)).total).toBe(0);
  });

  it('default statuses (believed: ACTIVE, CONTESTED) now and as known at K1', async () => {
    expect(await counts(undefined)).toMatchObject({ total: 4, byStatus: { ACTIVE: 4 } }); // B C E F
    expect(await counts({ knownAt: K1 })).toMatchObject({ total: 4, byStatus: { ACTIVE: 4 } }); // A B C D
  });

  it('world time: valid 75 and 25 days ago (a superseded record was true then; an expired one no longer)', async () => {
    // 75 days ago: A (superseded since, true then), B, C; D is retracted, E and F begin now
    expect(await counts({ validAt: ago(75) })).toMatchObject({
      total: 3,
      byStatus: { ACTIVE: 2, SUPERSEDED: 1 },
      byClass: { CONSTRAINT: 1, FACT: 1, PREFERENCE: 1 },
    });
    // 25 days ago: C had expired
    expect(await counts({ validAt: ago(25) })).toMatchObject({
      total: 2,
      byClass: { FACT: 1, PREFERENCE: 1 },
    });
  });

  it('both axes at once: valid 25 days ago as known at K1 (D not yet retracted, A not yet superseded)', async () => {
    expect(await counts({ validAt: ago(25), knownAt: K1 })).toEqual({
      total: 3,
      byClass: { FACT: 2, PREFERENCE: 1 },
      byStatus: { ACTIVE: 3 },
      byPredicate: { 'live in': 1, prefers: 1, 'runs on': 1 },
      byEntity: { 'queue-svc': 1, 'Redis cluster': 1 },
    });
  });
});

describe('neighbourhood as of either time axis', () => {
  const hood = async (asOf: Record<string, string> | undefined, statuses?: string[]) => {
    const r = await app.gql<{
      neighbourhood: {
        entity: { name: string };
        records: { totalCount: number; nodes: Array<{ id: string; status: string }> };
        relations: Array<{ from: string; type: string; to: string }>;
      } | null;
    }>(reader, HOOD, { e: { alias: 'queue-svc', type: 'service' }, ns, st: statuses, asOf });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    const n = r.data!.neighbourhood!;
    expect(n.entity.name).toBe('queue-svc');
    expect(n.records.totalCount).toBe(n.records.nodes.length);
    return { ids: n.records.nodes.map((x) => x.id).sort(), relations: n.relations };
  };

  it('as known at K1 only A existed; at K2 E supersedes A; believed now, only E', async () => {
    expect(await hood({ knownAt: K1 }, ALL)).toEqual({ ids: [id.A], relations: [] });
    expect(await hood({ knownAt: K2 }, ALL)).toEqual({
      ids: [id.A, id.E].sort(),
      relations: [{ from: id.E, type: 'SUPERSEDES', to: id.A }],
    });
    // the relation needs both ends in the neighbourhood: A is SUPERSEDED, outside the default statuses
    expect(await hood(undefined)).toEqual({ ids: [id.E], relations: [] });
    // world time 75 days ago: A was true then, E not yet
    expect(await hood({ validAt: ago(75) })).toEqual({ ids: [id.A], relations: [] });
  });

  it('an entity nobody may see through a record, or that does not exist, is null', async () => {
    const r = await app.gql<{ neighbourhood: unknown }>(reader, HOOD, { e: { alias: 'no-such-thing' }, ns });
    expect(r.errors).toBeUndefined();
    expect(r.data!.neighbourhood).toBeNull();
  });
});

describe('changes between two system times', () => {
  type ChangeNode = {
    kind: string;
    at: string;
    record: { id: string };
    revision: { version: number; status: string };
  };
  const changes = async (from: string, to: string, kinds?: string[], first = 50) => {
    const nodes: ChangeNode[] = [];
    let after: string | null = null;
    let page: {
      totalCount: number;
      counts: Bucket[];
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
      nodes: ChangeNode[];
    };
    do {
      const r = await app.gql<{ changes: typeof page }>(reader, CHANGES, {
        f: { namespace: ns, ...(kinds ? { kinds } : {}) },
        from,
        to,
        first,
        after,
      });
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      page = r.data!.changes;
      nodes.push(...page.nodes);
      after = page.pageInfo.endCursor;
    } while (page.pageInfo.hasNextPage);
    expect(page.totalCount).toBe(nodes.length);
    return { nodes, counts: hist(page.counts), list: nodes.map((n) => `${n.kind} ${n.record.id}`).sort() };
  };

  it('(K0, K1]: the four records created; (K1, K2]: two created, one superseded, one retracted', async () => {
    const first = await changes(K0, K1);
    expect(first.list).toEqual([id.A, id.B, id.C, id.D].map((x) => `CREATED ${x}`).sort());
    const second = await changes(K1, K2);
    expect(second.list).toEqual(
      [`CREATED ${id.E}`, `CREATED ${id.F}`, `SUPERSEDED ${id.A}`, `RETRACTED ${id.D}`].sort(),
    );
    expect(second.counts).toEqual({ CREATED: 2, RETRACTED: 1, SUPERSEDED: 1 });
    for (const n of second.nodes) {
      expect(n.at > K1 && n.at <= K2, `${n.kind} at ${n.at}`).toBe(true);
      if (n.kind !== 'CREATED') expect(n.revision.status).toBe(n.kind);
      else expect(n.revision.version).toBe(1);
    }
  });

  it('oldest first, complete across pages of one, filtered by kind; from must precede to', async () => {
    const all = await changes(K0, K2, undefined, 1);
    expect(all.nodes).toHaveLength(8);
    const at = all.nodes.map((n) => n.at);
    expect([...at].sort()).toEqual(at);
    expect(new Set(all.nodes.map((n) => `${n.kind} ${n.record.id}`)).size).toBe(8);
    expect((await changes(K0, K2, ['SUPERSEDED'])).list).toEqual([`SUPERSEDED ${id.A}`]);
    const bad = await app.gql(reader, CHANGES, { f: { namespace: ns }, from: K2, to: K0 });
    expect(bad.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
  });
});
