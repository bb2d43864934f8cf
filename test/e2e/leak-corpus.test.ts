import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecordStatuses, Sensitivities, type Sensitivity } from '../../src/domain/model.ts';
import type { TestApp } from '../support/harness.ts';
import {
  admins,
  APPROVE,
  caller,
  CALLERS,
  CLASSES,
  CLAUSES,
  entitled,
  expectRelationsVisible,
  GRANTS,
  grantsOf,
  held,
  inBatches,
  iso,
  LIST,
  mutate,
  nameOf,
  NAMESPACES,
  outcomes,
  propose,
  PURPOSES,
  QUERIES,
  QUERY_NAMESPACES,
  RECALL,
  recallOracle,
  recordsOracle,
  seededIds,
  setupLeakCorpus,
  sorted,
  T0,
  DAY,
  truth,
  VALID_AT,
  validAt,
  type Caller,
  type ListPage,
  type RecallItem,
  type Seed,
  type TruthRecord,
  type ValidAtKey,
} from '../support/leak-corpus.ts';

/**
 * The leak corpus: hundreds of generated cases over tenants, namespaces, labels, purposes, statuses and
 * validity windows. For every case the oracle — the ground truth read back with an admin token, filtered
 * by the pure entitlement model of src/domain/access.ts — says what the caller may see; recall, records,
 * counts, relations and `why` must never name anything else (records must name exactly that). Then
 * records a caller may not see are added, and the caller's ranking must not move.
 */

let app: TestApp;

beforeAll(async () => {
  let seedMs: number;
  ({ app, seedMs } = await setupLeakCorpus());
  const hist = (rs: TruthRecord[], f: (r: TruthRecord) => string) =>
    rs.reduce<Record<string, number>>((m, r) => ((m[f(r)] = (m[f(r)] ?? 0) + 1), m), {});
  console.log(
    `leak corpus: seeded in ${(seedMs / 1000).toFixed(1)} s; T ${truth.T.length} records`,
    hist(truth.T, (r) => r.status),
    `U ${truth.U.length}`,
    hist(truth.U, (r) => r.status),
    'receipts',
    outcomes,
  );
}, 900_000); // seeding the corpus through the whole pipeline: minutes on a shared 2-core machine
afterAll(async () => app?.stop());

// ── the corpus ────────────────────────────────────────────────────────────────────────────────────────

describe('leak corpus', () => {
  it('the ground truth has every shape the corpus needs, and the grants are what the oracle assumes', async () => {
    // every seeded record is there, in the right tenant
    const all = new Set([...truth.T, ...truth.U].map((r) => r.id));
    for (const id of seededIds) expect(all.has(id), id).toBe(true);
    const statuses = new Set(truth.T.map((r) => r.status));
    for (const s of ['ACTIVE', 'CONTESTED', 'SUPERSEDED', 'RETRACTED', 'CANDIDATE', 'REJECTED'] as const)
      expect(statuses, s).toContain(s);
    const live = truth.T.filter((r) => r.status === 'ACTIVE' || r.status === 'CONTESTED');
    for (const s of Sensitivities)
      expect(
        live.some((r) => r.sensitivity === s),
        s,
      ).toBe(true);
    const now = new Date().toISOString();
    expect(live.some((r) => !validAt(r, now) && validAt(r, VALID_AT.past))).toBe(true); // expired
    expect(live.some((r) => !validAt(r, now) && validAt(r, VALID_AT.future))).toBe(true); // future
    expect(truth.U.length).toBeGreaterThan(0);

    // the service's grants are the oracle's
    const r = await app.gql<{
      grants: Array<{
        id: string;
        grantee: string;
        namespace: string;
        maxSensitivity: string;
        purposes: string[] | null;
        revokedAt: string | null;
      }>;
    }>(admins.T, GRANTS);
    expect(r.errors).toBeUndefined();
    const norm = (g: { id: string; grantee: string; namespace: string; maxSensitivity: string }) =>
      `${g.id} ${g.grantee} ${g.namespace} ${g.maxSensitivity}`;
    expect(sorted(r.data!.grants.map(norm))).toEqual(sorted(held.map(norm)));
    for (const g of r.data!.grants) {
      const mine = held.find((h) => h.id === g.id)!;
      expect(g.purposes).toEqual(mine.purposes);
      expect(g.revokedAt === null).toBe(mine.revokedAt === null);
    }

    // the effective grants, by hand
    expect(grantsOf(caller('alice'), undefined)).toEqual([{ root: 'acme/a', maxSensitivity: 'INTERNAL' }]);
    expect(grantsOf(caller('bob'), undefined)).toEqual([{ root: 'acme/a/x', maxSensitivity: 'PUBLIC' }]);
    expect(grantsOf(caller('bob'), 'incident')).toEqual([
      { root: 'acme/a/x', maxSensitivity: 'PUBLIC' },
      { root: 'acme/b', maxSensitivity: 'CONFIDENTIAL' },
    ]);
    expect(grantsOf(caller('carol-via-bot-1'), 'incident')).toEqual([
      { root: 'acme/a/x', maxSensitivity: 'CONFIDENTIAL' },
    ]);
    expect(grantsOf(caller('carol'), undefined)).toEqual([{ root: null, maxSensitivity: 'CONFIDENTIAL' }]);
    expect(grantsOf(caller('dave'), 'code-change')).toEqual([{ root: 'acme', maxSensitivity: 'RESTRICTED' }]);
    expect(grantsOf(caller('dave'), 'incident')).toEqual([]);
    expect(grantsOf(caller('dave'), undefined)).toEqual([]);
    expect(grantsOf(caller('outsider'), 'incident')).toEqual([
      { root: null, maxSensitivity: 'CONFIDENTIAL' },
    ]);
  });

  it('expected sets, checked literally (not through effectiveGrants)', async () => {
    const list = async (c: Caller, namespace: string) => {
      const r = await app.gql<{ records: { totalCount: number; nodes: Array<{ id: string }> } }>(
        c.token,
        `query L($f: RecordFilter!) { records(filter: $f, first: 500) { totalCount nodes { id } } }`,
        { f: { namespace } },
      );
      expect(r.errors).toBeUndefined();
      return r.data!.records;
    };
    const live = (r: TruthRecord) => r.status === 'ACTIVE' || r.status === 'CONTESTED';
    const ids = (rs: TruthRecord[]) => sorted(rs.map((r) => r.id));
    const expectList = async (c: Caller, namespace: string, want: TruthRecord[]) => {
      const got = await list(c, namespace);
      expect(sorted(got.nodes.map((n) => n.id)), `${c.name} ${namespace}`).toEqual(ids(want));
      expect(got.totalCount).toBe(want.length);
    };
    // alice: exactly the ACTIVE/CONTESTED PUBLIC and INTERNAL records under acme/a
    const alice = truth.T.filter(
      (r) =>
        live(r) &&
        (r.namespace === 'acme/a' || r.namespace === 'acme/a/x') &&
        (r.sensitivity === 'PUBLIC' || r.sensitivity === 'INTERNAL'),
    );
    expect(alice.length).toBeGreaterThan(4);
    await expectList(caller('alice'), 'acme', alice);
    // bob without a purpose: only acme/a/x PUBLIC (his acme/b grant is for incidents)
    await expectList(
      caller('bob'),
      'acme',
      truth.T.filter((r) => live(r) && r.namespace === 'acme/a/x' && r.sensitivity === 'PUBLIC'),
    );
    // carol via bot-1: acme/a/x up to CONFIDENTIAL (carol's default ∩ bot-1's grant)
    await expectList(
      caller('carol-via-bot-1'),
      'acme',
      truth.T.filter((r) => live(r) && r.namespace === 'acme/a/x' && r.sensitivity !== 'RESTRICTED'),
    );
    // dave: only a purpose-bound grant and a revoked one → nothing without a purpose, not even globex
    await expectList(caller('dave'), 'acme', []);
    await expectList(caller('dave'), 'globex', []);
    // member: the tenant up to CONFIDENTIAL
    await expectList(
      caller('member'),
      'globex',
      truth.T.filter((r) => live(r) && r.namespace === 'globex' && r.sensitivity !== 'RESTRICTED'),
    );
    // outsider: tenant U's own records only
    await expectList(
      caller('outsider'),
      'acme',
      truth.U.filter((r) => live(r) && r.namespace.startsWith('acme') && r.sensitivity !== 'RESTRICTED'),
    );
    // dave recalling for code-change: RESTRICTED records under acme are his; for an incident nothing
    const recallIds = async (c: Caller, purpose: string) => {
      const r = await app.gql<{ recall: { items: RecallItem[] } }>(c.token, RECALL, {
        input: { query: QUERIES[0], namespace: 'acme', purpose, limit: 50, tokenBudget: 20000 },
      });
      expect(r.errors).toBeUndefined();
      return r.data!.recall.items.map((i) => i.record.id);
    };
    const dave = await recallIds(caller('dave'), 'code-change');
    const restricted = new Set(
      truth.T.filter((r) => r.sensitivity === 'RESTRICTED' && r.namespace.startsWith('acme')).map(
        (r) => r.id,
      ),
    );
    expect(dave.some((id) => restricted.has(id))).toBe(true);
    expect(await recallIds(caller('dave'), 'incident')).toEqual([]);
  });

  it('≥ 300 generated cases: recall, records, counts, relations and why never name what the caller may not see', async () => {
    const t0 = performance.now();
    const counts = {
      recall: 0,
      records: 0,
      recordsAsOf: 0,
      recallItems: 0,
      listed: 0,
      overrode: 0,
      contestedWith: 0,
      relations: 0,
    };
    const failures: string[] = [];
    const fail = (msg: string) => {
      if (failures.length < 50) failures.push(msg);
    };

    // recall: callers × purposes × query namespaces × world times
    const recallCases = CALLERS.flatMap((c) =>
      PURPOSES.flatMap((purpose) =>
        QUERY_NAMESPACES.flatMap((namespace) =>
          (Object.keys(VALID_AT) as ValidAtKey[]).map((when) => ({ c, purpose, namespace, when })),
        ),
      ),
    );
    await inBatches(recallCases, 8, async ({ c, purpose, namespace, when }, i) => {
      const at = VALID_AT[when];
      const query = QUERIES[i % QUERIES.length]!;
      const r = await app.gql<{ recall: { items: RecallItem[] } }>(c.token, RECALL, {
        input: {
          query,
          namespace,
          purpose,
          recipe: 'hybrid',
          limit: 50,
          tokenBudget: 20000,
          ...(at ? { asOf: { validAt: at } } : {}),
        },
      });
      const label = `recall ${c.name} ${purpose} ${namespace} ${when} "${query}"`;
      expect(r.errors, label).toBeUndefined();
      const allowed = recallOracle(c, purpose, namespace, at ?? new Date().toISOString());
      const visible = new Set(
        truth[c.tenant].filter((t) => entitled(grantsOf(c, purpose), t)).map((t) => t.id),
      );
      const items = r.data!.recall.items;
      counts.recall++;
      counts.recallItems += items.length;
      const got = new Set<string>();
      for (const it of items) {
        got.add(it.record.id);
        if (!allowed.has(it.record.id)) fail(`${label}: returned ${it.record.id}`);
        counts.overrode += it.why.overrode.length;
        counts.contestedWith += it.why.contestedWith.length;
        counts.relations += it.record.relations.length;
        for (const o of it.why.overrode) {
          if (!allowed.has(o.id)) fail(`${label}: why.overrode names ${o.id}`);
          got.add(o.id);
        }
        for (const id of it.why.contestedWith)
          if (!visible.has(id)) fail(`${label}: why.contestedWith names ${id}`);
        expectRelationsVisible(c, it.record.relations, label, purpose);
      }
      // not vacuous: when the caller may see something here, recall gives it (with fewer than the vector
      // arm's k it returns every candidate; overridden ones are named by their winners)
      if (allowed.size > 0 && items.length === 0) fail(`${label}: nothing returned, ${allowed.size} allowed`);
      if (allowed.size < 50 && sorted(got).join() !== sorted(allowed).join()) {
        const missing = sorted([...allowed].filter((id) => !got.has(id)));
        fail(
          `${label}: returned+overrode ${got.size} ≠ allowed ${allowed.size}; missing ${missing.join(', ')}`,
        );
      }
    });

    // records and totalCount: callers × namespaces × (default statuses, all statuses, default at past/future)
    const recordCases = CALLERS.flatMap((c) =>
      NAMESPACES.flatMap((namespace) =>
        (
          [
            { kind: 'records', statuses: undefined, at: undefined },
            { kind: 'records', statuses: RecordStatuses, at: undefined },
            { kind: 'recordsAsOf', statuses: undefined, at: VALID_AT.past },
            { kind: 'recordsAsOf', statuses: undefined, at: VALID_AT.future },
          ] as const
        ).map((v) => ({ c, namespace, ...v })),
      ),
    );
    await inBatches(recordCases, 8, async ({ c, namespace, kind, statuses, at }) => {
      const label = `records ${c.name} ${namespace} ${statuses ? 'all statuses' : 'default statuses'} ${at ?? ''}`;
      const want = recordsOracle(c, namespace, statuses, at);
      const listed: string[] = [];
      let after: string | null = null;
      for (let page = 0; page < 10; page++) {
        const r: { data: { records: ListPage } | null | undefined; errors: unknown } = await app.gql<{
          records: ListPage;
        }>(c.token, LIST, {
          f: { namespace, ...(statuses ? { statuses: [...statuses] } : {}) },
          ...(at ? { asOf: { validAt: at } } : {}),
          after,
        });
        expect(r.errors, label).toBeUndefined();
        const p = r.data!.records;
        if (p.totalCount !== want.size) fail(`${label}: totalCount ${p.totalCount} ≠ ${want.size}`);
        for (const n of p.nodes) {
          listed.push(n.id);
          counts.relations += n.relations.length;
          expectRelationsVisible(c, n.relations, label);
        }
        if (!p.pageInfo.hasNextPage) break;
        after = p.pageInfo.endCursor;
      }
      counts[kind]++;
      counts.listed += listed.length;
      const extra = listed.filter((id) => !want.has(id));
      const missing = [...want].filter((id) => !listed.includes(id));
      if (extra.length > 0) fail(`${label}: lists ${extra.length} it may not: ${extra.join(', ')}`);
      if (missing.length > 0) fail(`${label}: misses ${missing.length}: ${missing.join(', ')}`);
      if (new Set(listed).size !== listed.length) fail(`${label}: an id listed twice`);
    });

    const total = counts.recall + counts.records + counts.recordsAsOf;
    console.log(
      `leak corpus: ${total} cases — recall ${counts.recall} (${counts.recallItems} items), records ${counts.records}, ` +
        `records asOf ${counts.recordsAsOf} (${counts.listed} rows); why.overrode ${counts.overrode}, ` +
        `why.contestedWith ${counts.contestedWith}, relations ${counts.relations}; in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    expect(failures).toEqual([]);
    expect(total).toBeGreaterThanOrEqual(300);
    // the corpus is not vacuous: recall returned items, records listed rows
    expect(counts.recallItems).toBeGreaterThan(500);
    expect(counts.listed).toBeGreaterThan(500);
    expect(counts.overrode).toBeGreaterThan(0);
    expect(counts.contestedWith).toBeGreaterThan(0);
    expect(counts.relations).toBeGreaterThan(0);
  }, 600_000); // hundreds of GraphQL round trips: minutes on a loaded 2-core machine
});

// ── invariance ────────────────────────────────────────────────────────────────────────────────────────

describe('invisible records never move the ranking a caller sees', () => {
  it('adding ~40 records similar to the queries but invisible to the caller leaves recall unchanged', async () => {
    const who = [
      { c: caller('alice'), purpose: 'code-change' },
      { c: caller('bob'), purpose: 'incident' },
      { c: caller('carol-via-bot-1'), purpose: 'code-change' },
    ];
    const recipes = ['hybrid', 'bm25', 'vector'];
    const runs = who.flatMap((w) =>
      QUERIES.flatMap((query) => recipes.map((recipe) => ({ ...w, query, recipe }))),
    );
    const snapshot = () =>
      inBatches(runs, 8, async ({ c, purpose, query, recipe }) => {
        const r = await app.gql<{ recall: { items: RecallItem[] } }>(c.token, RECALL, {
          input: { query, namespace: 'acme', purpose, recipe, limit: 50, tokenBudget: 20000 },
        });
        expect(r.errors).toBeUndefined();
        return r.data!.recall.items.map((i) => ({ id: i.record.id, score: i.score }));
      });
    const before = await snapshot();
    for (const w of who)
      expect(
        before.some((b, i) => runs[i]!.c === w.c && b.length > 1),
        `${w.c.name} sees a ranking of more than one item`,
      ).toBe(true);

    // ~40 records close to the queries, each invisible to all three callers
    const hidden: Seed[] = [];
    const spots: Array<{ tenant: 'T' | 'U'; namespace: string; sensitivity: Sensitivity }> = [
      { tenant: 'T', namespace: 'acme', sensitivity: 'PUBLIC' },
      { tenant: 'T', namespace: 'acme', sensitivity: 'CONFIDENTIAL' },
      { tenant: 'T', namespace: 'acme/a', sensitivity: 'CONFIDENTIAL' },
      { tenant: 'T', namespace: 'acme/a', sensitivity: 'RESTRICTED' },
      { tenant: 'T', namespace: 'acme/a/x', sensitivity: 'RESTRICTED' },
      { tenant: 'T', namespace: 'acme/b', sensitivity: 'RESTRICTED' },
      { tenant: 'T', namespace: 'acme/c', sensitivity: 'INTERNAL' },
      { tenant: 'T', namespace: 'globex', sensitivity: 'PUBLIC' },
      { tenant: 'U', namespace: 'acme/a', sensitivity: 'PUBLIC' },
      { tenant: 'U', namespace: 'acme/a/x', sensitivity: 'PUBLIC' },
    ];
    for (let i = 0; i < 40; i++) {
      const spot = spots[i % spots.length]!;
      const q = QUERIES[i % QUERIES.length]!;
      hidden.push({
        ...spot,
        class: CLASSES[i % CLASSES.length]!,
        subject: `hidden-${nameOf(i + 500)}-${i}`,
        text: `${q[0]!.toUpperCase()}${q.slice(1)}: ${nameOf(i + 500)} checklist. ${CLAUSES[Math.floor(i / 4) % CLAUSES.length]}`,
        validFrom: iso(T0 - 200 * DAY),
      });
    }
    // each is invisible to each caller (by the oracle's entitlement) before it is written
    for (const s of hidden)
      for (const w of who) {
        const probe: TruthRecord = {
          id: '',
          namespace: s.namespace,
          sensitivity: s.sensitivity,
          status: 'ACTIVE',
          validFrom: s.validFrom!,
          validTo: null,
          statement: { subject: s.subject },
        };
        expect(
          s.tenant !== w.c.tenant || !entitled(grantsOf(w.c, w.purpose), probe),
          `${s.namespace} ${s.sensitivity} is visible to ${w.c.name}`,
        ).toBe(true);
      }
    await inBatches(hidden, 8, async (s) => {
      const r = await propose(s);
      // a new record each (not a reinforcement of a visible one), and RESTRICTED ones made ACTIVE
      expect(['ADMITTED', 'QUEUED'], `${s.subject}: ${r.outcome} ${r.reason}`).toContain(r.outcome);
      if (r.outcome === 'QUEUED') {
        const a = await mutate(admins[s.tenant], APPROVE, 'approve', {
          proposalId: r.recordId,
          expectedVersion: r.version,
        });
        expect(a.outcome).toBe('ADMITTED');
      }
    });

    const after = await snapshot();
    const diffs: string[] = [];
    runs.forEach((run, i) => {
      const b = before[i]!;
      const a = after[i]!;
      const label = `${run.c.name} ${run.purpose} ${run.recipe} "${run.query}"`;
      if (a.map((x) => x.id).join() !== b.map((x) => x.id).join())
        diffs.push(`${label}: ${JSON.stringify(b.map((x) => x.id))} → ${JSON.stringify(a.map((x) => x.id))}`);
      else
        a.forEach((x, j) => {
          // only recency moves between the two recalls (seconds on a 180-day half-life)
          if (Math.abs(x.score - b[j]!.score) > 1e-5)
            diffs.push(`${label}: score of ${x.id} ${b[j]!.score} → ${x.score}`);
        });
    });
    console.log(
      `invariance: ${runs.length} rankings compared, ${hidden.length} invisible records added, ${diffs.length} changed`,
    );
    expect(diffs).toEqual([]);
  }, 600_000);
});
