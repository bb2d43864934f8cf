import { describe, expect, it } from 'vitest';
import type { ArmQuery, ReadScope } from '../../src/ports/graph.ts';
import type { Sent } from './recording-executor.ts';
import { recordedRoles } from './roles.ts';

/**
 * The Cypher tier: every scoped read and every recall arm sends the one scope predicate, with the
 * scope's parameters, for a fixed ReadScope. No database: the recording executor captures the text and
 * the parameters; the snapshots pin the whole text, so a changed filter is a reviewed diff.
 */
const scope: ReadScope = {
  tenant: 't1',
  grants: [
    { root: 'acme/eng', maxSensitivity: 'INTERNAL' },
    { root: null, maxSensitivity: 'PUBLIC' },
  ],
};
const scopeParams = {
  tenant: 't1',
  grants: [
    { root: 'acme/eng', labels: ['PUBLIC', 'INTERNAL'] },
    { root: null, labels: ['PUBLIC'] },
  ],
  allLabels: 4,
};
/** The record predicate (on the bound record) and the entity predicate (visible through a readable record). */
const RECORD_SCOPE = `.tenant = $tenant
  AND any(g IN $grants WHERE (g.root IS NULL OR`;
/** The record predicate under a row's scope, where one statement serves several (relate-held.ts). */
const RECORD_SCOPE_ROW = `.tenant = s.tenant
  AND any(g IN s.grants WHERE (g.root IS NULL OR`;
const ENTITY_SCOPE = `.tenant = $tenant
  AND (any(g IN $grants WHERE g.root IS NULL AND size(g.labels) = $allLabels)
       OR EXISTS { MATCH (`;

const arm = (over: Partial<ArmQuery> = {}): ArmQuery => ({
  scope,
  namespace: 'acme/eng/web',
  classes: null,
  validAt: '2026-01-01T00:00:00.000Z',
  knownAt: null,
  k: 10,
  ...over,
});
const past = '2025-06-01T00:00:00.000Z';
const query = { namespace: 'acme/eng', textContains: 'Deploy', predicate: 'uses' };
/** Answers for the subtree-size probe: a small request (exact scans) or a large one (indexes). */
const small = { 'recall.size': [{ c: 3 }] };
const large = { 'recall.size': [{ c: 50_000 }] };
/** Large enough for the indexed paths, below the size from which the lexical arm asks Lucene unscoped. */
const medium = { 'recall.size': [{ c: 5_000 }] };

/** The vector arm's in-process shards: one namespace's stamp and two of its vectors to rank. */
const held = {
  ...small,
  'recall.vectorStamps': [{ i: 0, ns: 'acme/eng/web', epoch: 'e1', seq: 4 }],
  'recall.vectorLoad': [
    { tenant: 't1', ns: 'acme/eng/web', id: 'r2', model: 'm1', vector: [0.2, 0.1] },
    { tenant: 't1', ns: 'acme/eng/web', id: 'r1', model: 'm1', vector: [0.1, 0.2] },
  ],
};

/** The entity index a tenant holds (entity-held.ts): its stamp, and one entity named Mercury. */
const entityHeld = {
  'entity.stamps': [{ i: 0, epoch: 'e1', seq: 3 }],
  'entity.load': [
    { id: 'e-merc', name: 'Mercury', aliases: ['mercury'], externalIds: [], model: 'm1', vector: [0.1] },
  ],
};

/** The orders the graph and scope arms hold: one namespace's stamp, and each order's two records. */
const stamped = { 'recall.vectorStamps': [{ i: 0, ns: 'acme/eng', epoch: 'e1', seq: 2 }] };
const ordered = {
  ...stamped,
  'recall.graphOrder': [
    {
      aid: 'e1',
      ranked: [
        ['r1', 'acme/eng/web', 0, 0.9],
        ['r2', 'acme/eng', 1, 0.8],
      ],
    },
  ],
  'recall.scopeOrder': [{ ranked: ['r1', 'r2'] }],
};

/** Every statement a call sent; each must filter by the scope, and the whole text is snapshotted. */
async function sentBy(
  answers: object,
  call: (r: ReturnType<typeof recordedRoles>) => Promise<unknown>,
  vectorsHeld?: number,
) {
  const roles = recordedRoles(answers, vectorsHeld);
  await call(roles);
  return roles.db.sent;
}

/**
 * The arms' size probe only counts the request's records to choose a strategy (an exact scan or an
 * index) and never returns a record: it is bounded by tenant and namespace, not by grants. So are the
 * vector arm's stamp read, vector load and vector fetch: they fill the process's shards, and no id
 * reaches a caller but through `recall.vectorVisible`, which carries the scope predicate.
 */
const SIZE_PROBE = 'recall.size';
/**
 * Likewise the orders the graph and scope arms hold in process (anchor-orders.ts, ranked-memo.ts): ids
 * reach a caller only through `recall.graphVisible` and `recall.scopeVisible`, which carry the scope
 * predicate. An anchor's order spans its tenant (its entity is the tenant's), and the request's namespaces
 * are picked from it in process.
 */
const ANCHOR_PROBE = 'recall.graphOrder';
const PROBES = [
  SIZE_PROBE,
  'recall.vectorStamps',
  'recall.vectorLoad',
  'recall.vectorFetch',
  'recall.graphOrder',
  'recall.scopeOrder',
];

function expectScoped(sent: readonly Sent[], predicate: 'record' | 'entity' = 'record') {
  expect(sent.filter((s) => !PROBES.includes(s.op)).length).toBeGreaterThan(0);
  for (const s of sent) {
    if (s.op === SIZE_PROBE) {
      expect(s.cypher).toContain('n.tenant = $tenant AND n.namespace IN $chain');
      continue;
    }
    if (s.op === 'recall.vectorStamps') {
      // One statement for the requests asking together (coalesce.ts): each row carries its tenant.
      expect(s.cypher).toMatch(/st\.tenant = q\.tenant AND .*st\.namespace/);
      for (const q of s.params['qs'] as Array<{ tenant: string }>) expect(q.tenant).toBe(scopeParams.tenant);
      continue;
    }
    if (s.op === 'recall.vectorLoad') {
      // Loads asked for together go as one statement, each row with its own tenant (scope-vectors.ts).
      expect(s.cypher).toMatch(/n\.tenant = l\.tenant AND n\.namespace = l\.ns/);
      for (const l of s.params['loads'] as Array<{ tenant: string }>)
        expect(l.tenant).toBe(scopeParams.tenant);
      continue;
    }
    if (s.op === 'recall.vectorFetch') {
      // The vectors of records a load found changed, each by its tenant and namespace (scope-vectors.ts).
      expect(s.cypher).toMatch(/\(n:Record \{tenant: x\.tenant, id: x\.id\}\) WHERE n\.namespace = x\.ns/);
      for (const x of s.params['ids'] as Array<{ tenant: string }>) expect(x.tenant).toBe(scopeParams.tenant);
      continue;
    }
    if (s.op === 'entity.stamps') {
      // The tenants' entity stamps (entity-held.ts), read together: each row is one asked-for tenant.
      expect(s.cypher).toContain('(st:ScopeStamp {tenant: $tenants[i], namespace: $stamp})');
      expect(s.params['tenants']).toEqual([scopeParams.tenant]);
      continue;
    }
    if (s.op === 'entity.load') {
      // The tenant's entities changed since the index held (entity-held.ts); Neo4j filters what it finds.
      expect(s.cypher).toContain('e.tenant = $tenant AND e.stamp > $since');
      expect(s.params['tenant']).toBe(scopeParams.tenant);
      continue;
    }
    if (s.op === ANCHOR_PROBE) {
      expect(s.cypher).toContain('(a:Entity {tenant: $tenant, id: aid})');
      expect(s.params['tenant']).toBe(scopeParams.tenant);
      continue;
    }
    if (PROBES.includes(s.op)) {
      expect(s.cypher, s.op).toMatch(/\.tenant = \$tenant AND .*\.namespace/);
      continue;
    }
    if (s.params['groups'] !== undefined) {
      // Lookups of several requests as one statement: each row of $groups carries its own scope.
      expect(s.cypher, s.op).toContain(RECORD_SCOPE_ROW);
      expect(s.cypher, s.op).not.toContain('$tenant');
      const groups = s.params['groups'] as object[];
      expect(groups.length, s.op).toBeGreaterThan(0);
      for (const g of groups) expect(g, s.op).toMatchObject(scopeParams);
      continue;
    }
    expect(s.cypher, s.op).toContain(predicate === 'record' ? RECORD_SCOPE : ENTITY_SCOPE);
    expect(s.params, s.op).toMatchObject(scopeParams);
  }
}

const snapshot = (sent: readonly Sent[]) =>
  sent.map((s) => ({ op: s.op, cypher: s.cypher, params: s.params }));

/** Ingest's relate lookup: a subject match and, for drafts with a vector, the nearest relatable records. */
const relate = (r: ReturnType<typeof recordedRoles>) =>
  r.lookups.relateCandidatesMany(
    scope,
    'acme/eng/web',
    [
      { subject: 'Deploy', vector: [0.1, 0.2], modelId: 'm1' },
      { subject: 'Web', vector: null, modelId: 'm1' },
    ],
    5,
  );

const recordReads: Array<[string, (r: ReturnType<typeof recordedRoles>) => Promise<unknown>]> = [
  ['record now', (r) => r.reads.record(scope, 'r1')],
  ['record as of', (r) => r.reads.record(scope, 'r1', { knownAt: past, validAt: past })],
  ['records now', (r) => r.reads.records(scope, query, {}, 20, 'r0')],
  [
    'records as of',
    (r) => r.reads.records(scope, { ...query, classes: ['FACT'] }, { knownAt: past }, 20, null),
  ],
  ['recordCount', (r) => r.reads.recordCount(scope, query, { validAt: past })],
  ['history', (r) => r.reads.history(scope, 'r1')],
  ['relations', (r) => r.reads.relations(scope, 'r1')],
  ['reviewQueue', (r) => r.reads.reviewQueue(scope, 'acme/eng', 10, null)],
  ['recordsByIds', (r) => r.reads.recordsByIds(scope, ['r1', 'r2'], past)],
  ['relateCandidatesMany held in process', (r) => relate(r)],
  ['analytics recordCounts', (r) => r.analytics.recordCounts(scope, query, { knownAt: past })],
  ['analytics linksAmong', (r) => r.analytics.linksAmong(scope, query, {})],
  [
    'analytics changes',
    (r) =>
      r.analytics.changes(
        scope,
        { namespace: 'acme/eng', from: past, to: '2026-01-01T00:00:00.000Z' },
        5,
        null,
      ),
  ],
  [
    'analytics changeCounts',
    (r) =>
      r.analytics.changeCounts(scope, { namespace: 'acme/eng', from: past, to: '2026-01-01T00:00:00.000Z' }),
  ],
];

const entityReads: Array<[string, (r: ReturnType<typeof recordedRoles>) => Promise<unknown>]> = [
  ['entities', (r) => r.reads.entities(scope, ['e1'])],
  ['findEntity', (r) => r.reads.findEntity(scope, { alias: 'Mercury', type: 'planet' })],
  [
    'entityFacts',
    (r) =>
      r.lookups.entityFacts(scope, [
        { alias: 'Mercury', type: 'planet', vector: [0.1], modelId: 'm1', defaultId: 'e-m' },
      ]),
  ],
  ['entitiesNamed', (r) => r.arms.entitiesNamed(scope, ['mercury'], 5)],
];

const recallArms: Array<[string, object, (r: ReturnType<typeof recordedRoles>) => Promise<unknown>]> = [
  ['lexicalArm small', small, (r) => r.arms.lexicalArm(arm(), 'deploy the web app', 50)],
  ['lexicalArm large', medium, (r) => r.arms.lexicalArm(arm(), 'deploy the web app', 50)],
  ['lexicalArm whole tenant, words alone', large, (r) => r.arms.lexicalArm(arm(), 'deploy the web app', 50)],
  ['lexicalArm large as of', large, (r) => r.arms.lexicalArm(arm({ knownAt: past }), 'deploy the web', 50)],
  ['vectorArm held in process', held, (r) => r.arms.vectorArm(arm(), [0.1, 0.2], 'm1')],
  ['vectorArm large', large, (r) => r.arms.vectorArm(arm({ classes: ['FACT'] }), [0.1, 0.2], 'm1')],
  ['graphArm small', small, (r) => r.arms.graphArm(arm(), ['e1'])],
  ['graphArm large', { ...large, ...ordered }, (r) => r.arms.graphArm(arm({ knownAt: past }), ['e1'])],
  ['scopeArm', ordered, (r) => r.arms.scopeArm(arm())],
  ['relatedArm', {}, (r) => r.arms.relatedArm(arm(), ['r1', 'r2'])],
  ['relatedArm as of', {}, (r) => r.arms.relatedArm(arm({ knownAt: past }), ['r1'])],
];

describe('the scope predicate of every scoped read', () => {
  for (const [name, call] of recordReads) {
    it(`${name} filters records by the scope`, async () => {
      const sent = await sentBy(name.includes('held') ? held : {}, call);
      expectScoped(sent);
      expect(snapshot(sent)).toMatchSnapshot();
    });
  }
  it('relateCandidatesMany small with no vectors held (the Cypher scan) filters records by the scope', async () => {
    const sent = await sentBy(small, relate, 0);
    expectScoped(sent);
    expect(sent.map((s) => s.op)).toEqual([SIZE_PROBE, 'relate.bySubjectMany', 'relate.byVectorExactMany']);
    expect(snapshot(sent)).toMatchSnapshot();
  });
  it('relateCandidatesMany large (the ANN index, then the exact scan where it falls short) filters records by the scope', async () => {
    const sent = await sentBy(large, relate);
    expectScoped(sent);
    expect(sent.map((s) => s.op)).toEqual([
      SIZE_PROBE,
      'relate.bySubjectMany',
      'relate.byVectorMany',
      'relate.byVectorExactMany',
    ]);
    expect(snapshot(sent)).toMatchSnapshot();
  });
  for (const [name, call] of entityReads) {
    it(`${name} shows only visible entities`, async () => {
      const sent = await sentBy(entityHeld, call);
      expectScoped(sent, 'entity');
      expect(snapshot(sent)).toMatchSnapshot();
    });
  }
});

describe('the scope predicate of every recall arm', () => {
  for (const [name, answers, call] of recallArms) {
    it(`${name} filters candidates by the scope before ranking`, async () => {
      const sent = await sentBy(answers, call);
      expectScoped(sent);
      expect(snapshot(sent)).toMatchSnapshot();
    });
  }
  it('vectorArm small with no vectors held (the Cypher scan) filters candidates by the scope before ranking', async () => {
    const sent = await sentBy(small, (r) => r.arms.vectorArm(arm(), [0.1, 0.2], 'm1'), 0);
    expectScoped(sent);
    expect(sent.map((s) => s.op)).toEqual([SIZE_PROBE, 'recall.vectorExact']);
    // Off means off, an empty scope included: no stamp read, no vectors loaded.
    const empty = await sentBy({ 'recall.size': [{ c: 0 }] }, (r) => r.arms.vectorArm(arm(), [0.1], 'm1'), 0);
    expect(empty.map((s) => s.op)).toEqual([SIZE_PROBE, 'recall.vectorExact']);
    expect(snapshot(sent)).toMatchSnapshot();
  });
  it('vectorArm held in process sends the ranked ids, nearest first, through the scope predicate', async () => {
    const sent = await sentBy(held, (r) => r.arms.vectorArm(arm(), [0.1, 0.2], 'm1'));
    expect(sent.map((s) => s.op)).toEqual([
      SIZE_PROBE,
      'recall.vectorStamps',
      'recall.vectorLoad',
      'recall.vectorVisible',
    ]);
    expect(sent[2]!.params['loads']).toEqual([{ tenant: 't1', ns: 'acme/eng/web', since: -1 }]);
    expect(sent[3]!.params['ids']).toEqual(['r1', 'r2']);
  });
});
