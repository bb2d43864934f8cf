import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecordStatuses, Sensitivities, type Sensitivity } from '../../src/domain/model.ts';
import type { TestApp } from '../support/harness.ts';
import {
  CALLERS,
  CLASSES,
  COLOURS,
  entitled,
  grantsOf,
  inBatches,
  NAMESPACES,
  propose,
  setupLeakCorpus,
  sorted,
  SAME_START,
  STARS,
  tenants,
  VALID_AT,
  within,
  type Caller,
} from '../support/leak-corpus.ts';

/**
 * The leak corpus (test/support/leak-corpus.ts) run through the analysts' queries: recordCounts,
 * neighbourhood and changes, as each of the corpus's callers, over namespaces × statuses × both time
 * axes. The oracle is the ground truth read straight from the graph (every revision, ABOUT, SAME_AS and
 * relation edge) filtered by the pure entitlement model: every answer must equal it, so nothing the
 * caller may not see is counted, listed or linked (0 invisible items).
 */

const COUNTS = `query C($f: RecordFilter!, $asOf: AsOf) { recordCounts(filter: $f, asOf: $asOf) {
  total byClass { key count } byStatus { key count } byPredicate { key count } byEntity { entity { id } count } } }`;
const HOOD = `query N($e: EntityRefInput!, $ns: String!, $st: [RecordStatus!], $asOf: AsOf, $after: String) {
  neighbourhood(entity: $e, namespace: $ns, statuses: $st, asOf: $asOf) {
    entity { id } sameAs { id }
    records(first: 200, after: $after) { totalCount pageInfo { hasNextPage endCursor } nodes { id } }
    relations { from type to } } }`;
const CHANGES = `query X($f: ChangeFilter!, $from: DateTime!, $to: DateTime!, $after: String) {
  changes(filter: $f, from: $from, to: $to, first: 200, after: $after) {
    totalCount counts { key count } pageInfo { hasNextPage endCursor } nodes { kind record { id } revision { version } } } }`;

type Rev = {
  version: number;
  status: string;
  predicate: string;
  validFrom: string;
  validTo: string | null;
  recordedAt: string;
  retiredAt: string | null;
};
type Rec = {
  id: string;
  namespace: string;
  sensitivity: Sensitivity;
  class: string;
  about: string[];
  revisions: Rev[];
};
type Bucket = { key: string; count: number };
type PageInfo = { hasNextPage: boolean; endCursor: string | null };
type Hood = {
  entity: { id: string };
  sameAs: Array<{ id: string }>;
  records: { totalCount: number; pageInfo: PageInfo; nodes: Array<{ id: string }> };
  relations: Array<{ from: string; type: string; to: string }>;
};
type ChangePage = {
  totalCount: number;
  pageInfo: PageInfo;
  nodes: Array<{ kind: string; record: { id: string }; revision: { version: number } }>;
};
type Link = { from: string; type: string; to: string; at: string };
type Tenant = 'T' | 'U';
type AsOf = { validAt?: string; knownAt?: string };

let app: TestApp;
const graph: Record<Tenant, { recs: Rec[]; links: Link[]; sameAs: Map<string, string[]> }> = {
  T: { recs: [], links: [], sameAs: new Map() },
  U: { recs: [], links: [], sameAs: new Map() },
};
let midKnownAt = '';
let seededFrom = '';

const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);
/** Per star, names close enough that entity resolution may link them by a tentative SAME_AS. */
const ENTITY_NAMES = STARS.flatMap((s) => [`${cap(s)} API`, `${s} backend`, `${s} api service`]);
const PREDICATES = ['owns', 'depends on', 'notes'];

/** An entity layer over the corpus: records about entities, in every namespace and label, both tenants. */
async function seedEntities() {
  const cells = (tenant: 'T' | 'U') =>
    NAMESPACES.flatMap((namespace) =>
      Sensitivities.map((sensitivity) => ({ tenant, namespace, sensitivity })),
    );
  // two records per cell in T, one in U
  await inBatches([...cells('T'), ...cells('T'), ...cells('U')], 6, async (c, k) => {
    const name = ENTITY_NAMES[k % ENTITY_NAMES.length]!;
    const second = k % 5 === 0 ? [ENTITY_NAMES[(k + 7) % ENTITY_NAMES.length]!] : [];
    const predicate = PREDICATES[k % PREDICATES.length]!;
    await propose({
      ...c,
      class: CLASSES[k % CLASSES.length]!,
      subject: `ent-${k}`,
      predicate,
      object: `${COLOURS[k % 10]} runbook ${k}`,
      text: `Entity layer ${k}: ${name} ${predicate} the ${COLOURS[k % 10]} runbook for ${c.namespace}.`,
      about: [name, ...second].map((alias) => ({ alias, type: 'service' })),
    });
  });
  // Related pairs about one entity, across labels, so that some callers see one end only: a relation
  // may be listed only when both ends are visible.
  const pairs = [
    { star: 'orion', labels: ['PUBLIC', 'CONFIDENTIAL'], change: true },
    { star: 'vega', labels: ['INTERNAL', 'INTERNAL'], change: true },
    { star: 'lyra', labels: ['PUBLIC', 'CONFIDENTIAL'], change: false },
    { star: 'draco', labels: ['INTERNAL', 'PUBLIC'], change: false },
  ] as const;
  await Promise.all(
    pairs.map(async (p) => {
      const base = {
        tenant: 'T' as const,
        namespace: 'acme/a',
        subject: `${p.star}-queue`,
        predicate: 'runs on',
        about: [{ alias: `${cap(p.star)} API`, type: 'service' }],
        ...(p.change ? {} : { validFrom: SAME_START }),
      };
      await propose({
        ...base,
        sensitivity: p.labels[0],
        object: 'rabbitmq',
        text: `The ${p.star} queue runs on RabbitMQ for the canary pipeline.`,
      });
      const r = await propose({
        ...base,
        sensitivity: p.labels[1],
        object: 'kafka',
        text: p.change
          ? `The ${p.star} queue now runs on Kafka instead of RabbitMQ.`
          : `The ${p.star} queue runs on Kafka for the canary pipeline.`,
      });
      // the relation is recorded either way; a higher-label cause does not mark the lower-label target
      expect(r.reason, `${p.star}: ${r.outcome}`).toMatch(p.change ? /^supersedes / : /^contradicts /);
    }),
  );
}

/** The ground truth, straight from the graph (the test's own read, not the API under test). */
async function readGraph(tenant: Tenant) {
  const db = app.m.store.db;
  const params = { tenant: tenants[tenant] };
  const recs = await db.read(
    'test.truth',
    `MATCH (n:Record {tenant: $tenant})
     RETURN n.id AS id, n.namespace AS namespace, n.sensitivity AS sensitivity, n.class AS class,
       COLLECT { MATCH (n)-[:ABOUT]->(e:Entity) RETURN e.id } AS about,
       COLLECT { MATCH (n)-[:HAS_REVISION]->(v:Revision)
                 RETURN v {.version, .status, .predicate, .validFrom, .validTo, .recordedAt, .retiredAt} ORDER BY v.version } AS revisions`,
    params,
  );
  const links = await db.read(
    'test.links',
    `MATCH (a:Record {tenant: $tenant})-[r:EXTENDS|CONTRADICTS|SUPERSEDES]->(b:Record)
     RETURN a.id AS from, type(r) AS type, b.id AS to, r.recordedAt AS at`,
    params,
  );
  const same = await db.read(
    'test.sameAs',
    `MATCH (a:Entity {tenant: $tenant})-[:SAME_AS]-(b:Entity) RETURN a.id AS a, collect(DISTINCT b.id) AS others`,
    params,
  );
  graph[tenant] = {
    recs: recs.records.map((r) => r.toObject() as Rec),
    links: links.records.map((r) => r.toObject() as Link),
    sameAs: new Map(same.records.map((r) => [String(r.get('a')), r.get('others') as string[]])),
  };
}

beforeAll(async () => {
  seededFrom = new Date().toISOString();
  ({ app } = await setupLeakCorpus({ seedMore: seedEntities }));
  await Promise.all([readGraph('T'), readGraph('U')]);
  // a system time in the middle of the seeding: before it some records existed, others not yet
  const times = graph.T.recs.flatMap((r) => r.revisions.map((v) => v.recordedAt)).sort();
  midKnownAt = times[Math.floor(times.length / 2)]!;
}, 900_000); // seeding ~400 writes through the whole pipeline: minutes on a shared 2-core machine
afterAll(async () => app?.stop());

// ── the oracle ────────────────────────────────────────────────────────────────────────────────────────

const recsOf = (c: Caller) => graph[c.tenant].recs;
const mayRead = (c: Caller, r: Rec) => entitled(grantsOf(c, undefined), r);
/** The revision current at knownAt (the current one without it); undefined when the record did not exist. */
const revisionAt = (r: Rec, knownAt: string | undefined) =>
  knownAt === undefined
    ? r.revisions[r.revisions.length - 1]
    : r.revisions.find((v) => v.recordedAt <= knownAt && (v.retiredAt === null || v.retiredAt > knownAt));

/** What `records(filter, asOf)` must list: entitled, in the subtree, status (with its defaults), validity. */
function listed(
  c: Caller,
  ns: string,
  statuses: readonly string[] | undefined,
  asOf: AsOf,
  about?: Set<string>,
) {
  const allowed =
    statuses ?? (asOf.validAt ? ['ACTIVE', 'CONTESTED', 'SUPERSEDED'] : ['ACTIVE', 'CONTESTED']);
  return recsOf(c).flatMap((r) => {
    const v = revisionAt(r, asOf.knownAt);
    if (!v || !mayRead(c, r) || !within(r.namespace, ns) || !allowed.includes(v.status)) return [];
    if (asOf.validAt && !(v.validFrom <= asOf.validAt && (v.validTo === null || v.validTo > asOf.validAt)))
      return [];
    if (about && !r.about.some((e) => about.has(e))) return [];
    return [{ r, v }];
  });
}

const histogram = (keys: string[]) =>
  keys.reduce<Record<string, number>>((m, k) => ((m[k] = (m[k] ?? 0) + 1), m), {});
const hist = (bs: Bucket[]) => Object.fromEntries(bs.map((b) => [b.key, b.count]));

/** An entity is visible through a record the caller may read (any status), or to a full-tenant reader. */
const entityVisible = (c: Caller, e: string) =>
  grantsOf(c, undefined).some((g) => g.root === null && g.maxSensitivity === 'RESTRICTED') ||
  recsOf(c).some((r) => r.about.includes(e) && mayRead(c, r));

/** World times, a system time in the middle of the seeding, and both at once. */
const asOfs = (): Array<[string, AsOf]> => [
  ['now', {}],
  ['validAt past', { validAt: VALID_AT.past }],
  ['validAt future', { validAt: VALID_AT.future }],
  ['knownAt mid-seeding', { knownAt: midKnownAt }],
  ['knownAt mid + validAt past', { knownAt: midKnownAt, validAt: VALID_AT.past }],
];

describe('analytics over the leak corpus', () => {
  it('the corpus has entities, SAME_AS links and relations to leak through (the checks are not vacuous)', () => {
    const T = graph.T;
    expect(T.recs.filter((r) => r.about.length > 0).length).toBeGreaterThan(40);
    expect(T.sameAs.size, 'no SAME_AS edge among the entity names').toBeGreaterThan(0);
    expect(T.links.length).toBeGreaterThan(0);
    expect(midKnownAt > seededFrom).toBe(true);
  });

  it('recordCounts equals the oracle for every caller × namespace × statuses × time axis (0 invisible counted)', async () => {
    const cases = CALLERS.flatMap((c) =>
      NAMESPACES.flatMap((ns) =>
        [undefined, [...RecordStatuses]].flatMap((statuses) =>
          asOfs().map(([name, asOf]) => ({ c, ns, statuses, name, asOf })),
        ),
      ),
    );
    const failures: string[] = [];
    let counted = 0;
    await inBatches(cases, 8, async ({ c, ns, statuses, name, asOf }) => {
      const r = await app.gql<{
        recordCounts: {
          total: number;
          byClass: Bucket[];
          byStatus: Bucket[];
          byPredicate: Bucket[];
          byEntity: Array<{ entity: { id: string }; count: number }>;
        };
      }>(c.token, COUNTS, { f: { namespace: ns, ...(statuses ? { statuses } : {}) }, asOf });
      const label = `${c.name} ${ns} ${statuses ? 'all' : 'default'} ${name}`;
      expect(r.errors, label).toBeUndefined();
      const got = r.data!.recordCounts;
      const want = listed(c, ns, statuses, asOf);
      counted += got.total;
      const actual = {
        total: got.total,
        byClass: hist(got.byClass),
        byStatus: hist(got.byStatus),
        byPredicate: hist(got.byPredicate),
        byEntity: hist(got.byEntity.map((b) => ({ key: b.entity.id, count: b.count }))),
      };
      const expected = {
        total: want.length,
        byClass: histogram(want.map((x) => x.r.class)),
        byStatus: histogram(want.map((x) => x.v.status)),
        byPredicate: histogram(want.map((x) => x.v.predicate)),
        byEntity: histogram(want.flatMap((x) => x.r.about)),
      };
      if (!isDeepStrictEqual(actual, expected))
        failures.push(`${label}: ${JSON.stringify(actual)} ≠ ${JSON.stringify(expected)}`);
    });
    console.log(`analytics leak: ${cases.length} recordCounts cases, ${counted} records counted`);
    expect(failures.slice(0, 20)).toEqual([]);
    expect(cases.length).toBeGreaterThanOrEqual(300);
    expect(counted).toBeGreaterThan(1000);
  }, 900_000);

  it('neighbourhood: entity, SAME_AS, records and relations equal the oracle for every caller (0 invisible listed)', async () => {
    // every entity of both tenants, asked by every caller (an entity of the other tenant must be null)
    const entities = (['T', 'U'] as const).flatMap((tenant) =>
      [...new Set(graph[tenant].recs.flatMap((r) => r.about))].sort().map((id) => ({ id, tenant })),
    );
    const variants = [
      ['acme', 'now', undefined, {}],
      ['acme', 'all statuses', [...RecordStatuses], {}],
      ['acme/a', 'all statuses, knownAt mid', [...RecordStatuses], { knownAt: midKnownAt }],
      ['acme', 'validAt past', undefined, { validAt: VALID_AT.past }],
    ] as const;
    // across tenants only the first variant: the answer must be null whatever else is asked
    const cases = CALLERS.flatMap((c) =>
      entities.flatMap(({ id: e, tenant }) =>
        variants
          .slice(0, c.tenant === tenant ? variants.length : 1)
          .map(([ns, name, statuses, asOf]) => ({ c, e, tenant, ns, name, statuses, asOf: asOf as AsOf })),
      ),
    );
    const failures: string[] = [];
    const seen = { hoods: 0, records: 0, relations: 0, sameAs: 0, nulls: 0 };
    await inBatches(cases, 8, async ({ c, e, tenant, ns, name, statuses, asOf }) => {
      const label = `${c.name} ${e} ${ns} ${name}`;
      const ids: string[] = [];
      let hood: Hood | null = null;
      let after: string | null = null;
      for (let page = 0; page < 10; page++) {
        const r: { data: { neighbourhood: Hood | null } | null | undefined; errors: unknown } =
          await app.gql<{
            neighbourhood: Hood | null;
          }>(c.token, HOOD, { e: { id: e }, ns, st: statuses, asOf, after });
        expect(r.errors, label).toBeUndefined();
        hood = r.data!.neighbourhood;
        if (!hood) break;
        ids.push(...hood.records.nodes.map((n) => n.id));
        if (!hood.records.pageInfo.hasNextPage) break;
        after = hood.records.pageInfo.endCursor;
      }
      // the oracle: an entity is seen from its own tenant only, and only through a record the caller may read
      const visible = c.tenant === tenant && entityVisible(c, e);
      if (!visible) {
        seen.nulls++;
        if (hood !== null) failures.push(`${label}: an entity the caller may not see is answered`);
        return;
      }
      if (!hood) return void failures.push(`${label}: null for a visible entity`);
      const same = (graph[tenant].sameAs.get(e) ?? []).filter((s) => entityVisible(c, s));
      const members = new Set([e, ...same]);
      const want = new Set(listed(c, ns, statuses, asOf, members).map((x) => x.r.id));
      const wantLinks = graph[tenant].links
        .filter((l) => want.has(l.from) && want.has(l.to) && (!asOf.knownAt || l.at <= asOf.knownAt))
        .map((l) => `${l.from} ${l.type} ${l.to}`);
      seen.hoods++;
      seen.records += ids.length;
      seen.relations += hood.relations.length;
      seen.sameAs += hood.sameAs.length;
      const check = (what: string, got: string[], exp: Iterable<string>) => {
        if (sorted(got).join() !== sorted(exp).join())
          failures.push(`${label}: ${what} ${JSON.stringify(sorted(got))} ≠ ${JSON.stringify(sorted(exp))}`);
      };
      check(
        'sameAs',
        hood.sameAs.map((s) => s.id),
        same,
      );
      check('records', ids, want);
      check(
        'relations',
        hood.relations.map((l) => `${l.from} ${l.type} ${l.to}`),
        wantLinks,
      );
    });
    console.log(`analytics leak: ${cases.length} neighbourhood cases`, seen);
    expect(failures.slice(0, 20)).toEqual([]);
    expect(seen.records).toBeGreaterThan(100);
    expect(seen.relations).toBeGreaterThan(0);
    expect(seen.sameAs).toBeGreaterThan(0);
    expect(seen.nulls).toBeGreaterThan(0);
  }, 900_000);

  it('changes between two system times equal the oracle for every caller and namespace (0 invisible listed)', async () => {
    const now = new Date().toISOString();
    const windows: Array<[string, string]> = [
      [seededFrom, midKnownAt],
      [midKnownAt, now],
    ];
    const cases = CALLERS.flatMap((c) =>
      NAMESPACES.flatMap((ns) => windows.map(([from, to]) => ({ c, ns, from, to }))),
    );
    const failures: string[] = [];
    let listedChanges = 0;
    await inBatches(cases, 8, async ({ c, ns, from, to }) => {
      const label = `${c.name} ${ns} (${from}, ${to}]`;
      const got: string[] = [];
      let after: string | null = null;
      let totalCount = -1;
      for (let page = 0; page < 20; page++) {
        const r: { data: { changes: ChangePage } | null | undefined; errors: unknown } = await app.gql<{
          changes: ChangePage;
        }>(c.token, CHANGES, { f: { namespace: ns }, from, to, after });
        expect(r.errors, label).toBeUndefined();
        const p = r.data!.changes;
        totalCount = p.totalCount;
        got.push(...p.nodes.map((n) => `${n.kind} ${n.record.id} v${n.revision.version}`));
        if (!p.pageInfo.hasNextPage) break;
        after = p.pageInfo.endCursor;
      }
      const want = recsOf(c)
        .filter((r) => mayRead(c, r) && within(r.namespace, ns))
        .flatMap((r) =>
          r.revisions.flatMap((v, i) => {
            if (!(v.recordedAt > from && v.recordedAt <= to)) return [];
            const out: string[] = [];
            if (v.version === 1) out.push(`CREATED ${r.id} v1`);
            const prev = r.revisions[i - 1];
            if ((v.status === 'SUPERSEDED' || v.status === 'RETRACTED') && prev?.status !== v.status)
              out.push(`${v.status} ${r.id} v${v.version}`);
            return out;
          }),
        );
      listedChanges += got.length;
      if (totalCount !== want.length) failures.push(`${label}: totalCount ${totalCount} ≠ ${want.length}`);
      if (sorted(got).join() !== sorted(want).join())
        failures.push(
          `${label}: ${got.length} listed, ${want.length} expected; extra ${got
            .filter((x) => !want.includes(x))
            .slice(0, 3)
            .join(', ')}`,
        );
    });
    console.log(`analytics leak: ${cases.length} changes cases, ${listedChanges} changes listed`);
    expect(failures.slice(0, 20)).toEqual([]);
    expect(listedChanges).toBeGreaterThan(100);
  }, 900_000);
});
