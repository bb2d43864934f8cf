import { nodeTextFiles } from '../../src/adapters/files/text-files.ts';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isMuninnError, type MuninnError } from '../../src/domain/errors.ts';
import { goldenSetHash, parseGoldenSet, type GoldenQuery, type GoldenSet } from '../../src/eval/golden.ts';
import {
  hitAtK,
  meanMetrics,
  meanMetricsByTag,
  ndcgAtK,
  recallAllAtK,
  recallAnyAtK,
  recallAtK,
  reciprocalRank,
  scoreQuery,
  type QueryMetrics,
} from '../../src/eval/metrics.ts';
import type { EvalRun, ScoredRun } from '../../src/eval/model.ts';
import { formatRun, worstQueries } from '../../src/eval/report.ts';
import { runGoldenSet, type EvalDeps, type RecallRequest } from '../../src/eval/runner.ts';
import {
  compareRuns,
  listRuns,
  previousScored,
  readRun,
  runFileName,
  writeRun,
} from '../../src/eval/runs.ts';
import { assertTestDatabase, fixtureIdempotencyKey, seedGoldenSet, seedPlan } from '../../src/eval/seed.ts';

/*
 * The pure core of `muninn eval`: metrics, the golden-set schema, the runner over fake ports, seeding,
 * stored runs and their comparison, and the report. Every expected number is worked out by hand in the
 * comment next to it.
 */

const raw = (): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL('../fixtures/golden/basic.json', import.meta.url), 'utf8')) as Record<
    string,
    unknown
  >;
const basic = (): GoldenSet => parseGoldenSet(raw());

function thrown(f: () => unknown): MuninnError {
  try {
    f();
  } catch (e) {
    if (isMuninnError(e)) return e;
    throw e;
  }
  throw new Error('expected a MuninnError');
}

async function rejected(p: Promise<unknown>): Promise<MuninnError> {
  try {
    await p;
  } catch (e) {
    if (isMuninnError(e)) return e;
    throw e;
  }
  throw new Error('expected a MuninnError');
}

const log2_3 = Math.log2(3);

describe('metrics', () => {
  // relevant {a, b, c}; a at rank 2, b at rank 4.
  const returned = ['x', 'a', 'y', 'b'];
  const relevant = ['a', 'b', 'c'];

  it('scores the top k only', () => {
    expect(hitAtK(returned, relevant, 1)).toBe(0);
    expect(hitAtK(returned, relevant, 3)).toBe(1);
    expect(recallAnyAtK(returned, relevant, 3)).toBe(1);
    expect(recallAllAtK(returned, relevant, 3)).toBe(0);
    expect(recallAtK(returned, relevant, 3)).toBeCloseTo(1 / 3, 12);
    expect(recallAtK(returned, relevant, 4)).toBeCloseTo(2 / 3, 12);
    expect(reciprocalRank(returned, relevant, 1)).toBe(0);
    expect(reciprocalRank(returned, relevant, 3)).toBe(0.5);
    expect(recallAllAtK(['c', 'b', 'a'], relevant, 3)).toBe(1);
    expect(recallAllAtK(['c', 'b', 'a'], relevant, 2)).toBe(0);
  });

  it('gives 0 for a miss and for an empty answer', () => {
    for (const r of [['x', 'y'], []]) {
      expect(scoreQuery(r, ['a'], 10)).toEqual({
        hitAtK: 0,
        recallAnyAtK: 0,
        recallAllAtK: 0,
        recallAtK: 0,
        reciprocalRank: 0,
        ndcgAt10: 0,
      });
    }
  });

  it('counts a duplicate once, at its first position, and lets it keep its slot', () => {
    // ['a', 'a', 'b'] with k = 2: a found once, b is in slot 3 → recall 1/2, not 1 (and never 2/2 from a twice).
    expect(recallAtK(['a', 'a', 'b'], ['a', 'b'], 2)).toBe(0.5);
    expect(recallAllAtK(['a', 'a', 'b'], ['a', 'b'], 2)).toBe(0);
    expect(recallAllAtK(['a', 'a', 'b'], ['a', 'b'], 3)).toBe(1);
    expect(recallAtK(['a', 'a', 'a'], ['a', 'b'], 3)).toBe(0.5);
    // x at 1, a at 2 and again at 3: RR 1/2; DCG counts a once: (1/log2 3) / (1 + 1/log2 3).
    expect(reciprocalRank(['x', 'a', 'a'], ['a'], 3)).toBe(0.5);
    expect(ndcgAtK(['a', 'a'], ['a', 'b'], 10)).toBeCloseTo(1 / (1 + 1 / log2_3), 12);
  });

  it('computes binary nDCG by hand', () => {
    // [a, x, b], relevant {a, b}: DCG = 1/log2 2 + 1/log2 4 = 1.5; IDCG = 1 + 1/log2 3 ≈ 1.63093.
    expect(ndcgAtK(['a', 'x', 'b'], ['a', 'b'], 10)).toBeCloseTo(0.9197207891481876, 12);
    expect(ndcgAtK(['a', 'b', 'x'], ['a', 'b'], 10)).toBe(1);
    expect(ndcgAtK(['b', 'a'], ['a', 'b'], 10)).toBe(1);
    expect(ndcgAtK(['x', 'a'], ['a'], 1)).toBe(0);
  });

  it('computes graded nDCG by hand', () => {
    // grades a:1, b:3; [a, x, b]: DCG = 1·1 + 3·(1/2) = 2.5; ideal [b, a]: 3 + 1/log2 3 ≈ 3.63093.
    expect(ndcgAtK(['a', 'x', 'b'], ['a', 'b'], 10, { a: 1, b: 3 })).toBeCloseTo(0.6885288809404666, 12);
    // The graded order is the ideal one: 1.
    expect(ndcgAtK(['b', 'a'], ['a', 'b'], 10, { a: 1, b: 3 })).toBe(1);
    // The ideal is cut at k too: grades a:3 b:2 c:1, [c, a] at k = 2:
    // DCG = 1 + 3/log2 3; IDCG = 3 + 2/log2 3.
    expect(ndcgAtK(['c', 'a', 'b'], ['a', 'b', 'c'], 2, { a: 3, b: 2, c: 1 })).toBeCloseTo(
      (1 + 3 / log2_3) / (3 + 2 / log2_3),
      12,
    );
    // A relevant id without a grade weighs 1; grades of non-relevant ids are ignored.
    expect(ndcgAtK(['a', 'x', 'b'], ['a', 'b'], 10, { b: 3, x: 5 })).toBeCloseTo(0.6885288809404666, 12);
  });

  it('refuses an empty relevant set, a bad k and a non-positive grade', () => {
    for (const f of [
      () => hitAtK(['a'], [], 10),
      () => ndcgAtK(['a'], new Set<string>(), 10),
      () => scoreQuery(['a'], [], 10),
      () => recallAtK(['a'], ['a'], 0),
      () => reciprocalRank(['a'], ['a'], 1.5),
      () => ndcgAtK(['a'], ['a'], 10, { a: 0 }),
    ]) {
      expect(thrown(f).code).toBe('BAD_USER_INPUT');
    }
  });

  it('aggregates means overall and per tag', () => {
    const m = (x: number, rr: number): QueryMetrics => ({
      hitAtK: x,
      recallAnyAtK: x,
      recallAllAtK: x,
      recallAtK: x,
      reciprocalRank: rr,
      ndcgAt10: x,
    });
    const rows = [
      { tags: ['fact'], metrics: m(1, 1) },
      { tags: ['fact', 'constraint'], metrics: m(0, 0) },
      { tags: ['constraint', 'constraint'], metrics: m(1, 0.5) },
      { tags: [], metrics: m(0, 0.25) },
    ];
    const all = meanMetrics(rows);
    expect(all.n).toBe(4);
    expect(all.means.hitAtK).toBe(0.5);
    expect(all.means.reciprocalRank).toBe((1 + 0 + 0.5 + 0.25) / 4);
    const byTag = meanMetricsByTag(rows);
    expect(Object.keys(byTag)).toEqual(['constraint', 'fact']);
    // A tag repeated on one query counts it once.
    expect(byTag.constraint).toEqual({ n: 2, means: m(0.5, 0.25) });
    expect(byTag.fact).toEqual({ n: 2, means: m(0.5, 0.5) });
    expect(thrown(() => meanMetrics([])).code).toBe('BAD_USER_INPUT');
  });
});

describe('golden set schema', () => {
  it('accepts the example set and keeps pass-through fixture fields', () => {
    const set = basic();
    expect(set.fixtures.length).toBeGreaterThanOrEqual(8);
    expect(set.queries.length).toBeGreaterThanOrEqual(6);
    const db = set.fixtures.find((f) => f.id === 'f-db')!;
    expect(db.about).toEqual([{ alias: 'payments-api', type: 'service' }]);
    expect(set.queries.find((q) => q.id === 'q-post')!.tags).toEqual(['preference']);
  });

  it('names the query whose relevant id is not a fixture', () => {
    const r = raw();
    const queries = r.queries as Array<Record<string, unknown>>;
    queries[2] = { ...queries[2], relevant: ['f-db', 'f-nope'] };
    const e = thrown(() => parseGoldenSet(r));
    expect(e.code).toBe('BAD_USER_INPUT');
    expect(e.message).toContain(`query "${String(queries[2]!.id)}" names relevant fixture "f-nope"`);
  });

  it('refuses grades outside the relevant list, duplicates, foreign namespaces and typos', () => {
    const cases: Array<[(r: Record<string, unknown>) => void, string]> = [
      [
        (r) => {
          const q = (r.queries as Array<Record<string, unknown>>)[0]!;
          q.grades = { 'f-currency': 2 };
        },
        'grades fixture "f-currency", which is not in its relevant list',
      ],
      [
        (r) => {
          const q = (r.queries as Array<Record<string, unknown>>)[0]!;
          q.grades = { 'f-ghost': 2 };
        },
        'grades fixture "f-ghost", which is not in the set',
      ],
      [
        (r) => {
          const f = r.fixtures as Array<Record<string, unknown>>;
          f.push({ ...f[0]! });
        },
        'duplicate fixture id "f-db"',
      ],
      [
        (r) => {
          const q = r.queries as Array<Record<string, unknown>>;
          q.push({ ...q[0]! });
        },
        'duplicate query id "q-db"',
      ],
      [
        (r) => {
          (r.fixtures as Array<Record<string, unknown>>)[0]!.namespace = 'acme/platform';
        },
        'fixture "f-db" lies outside',
      ],
      [
        (r) => {
          const q = (r.queries as Array<Record<string, unknown>>)[0]!;
          q.relevent = q.relevant;
        },
        'relevent',
      ],
      [
        (r) => {
          (r.queries as Array<Record<string, unknown>>)[0]!.relevant = [];
        },
        'queries.0.relevant',
      ],
      [
        (r) => {
          const f = (r.fixtures as Array<Record<string, unknown>>).find((x) => x.class === 'DECISION')!;
          delete f.rationale;
        },
        'a DECISION needs a rationale',
      ],
    ];
    for (const [mutate, message] of cases) {
      const r = raw();
      mutate(r);
      const e = thrown(() => parseGoldenSet(r));
      expect(e.code).toBe('BAD_USER_INPUT');
      expect(e.message).toContain(message);
    }
  });

  it('hashes content, not formatting or key order', () => {
    const a = basic();
    const reordered = parseGoldenSet(
      JSON.parse(JSON.stringify(Object.fromEntries(Object.entries(raw()).reverse()))),
    );
    expect(goldenSetHash(reordered)).toBe(goldenSetHash(a));
    const r = raw();
    (r.queries as Array<Record<string, unknown>>)[0]!.relevant = ['f-currency'];
    expect(goldenSetHash(parseGoldenSet(r))).not.toBe(goldenSetHash(a));
  });
});

/** A clock that advances one second per reading. */
function stepClock(start = '2026-12-01T10:00:00.000Z'): EvalDeps['clock'] {
  let t = Date.parse(start);
  return {
    now: () => {
      const d = new Date(t);
      t += 1000;
      return d;
    },
  };
}

interface FakeRecall {
  deps: EvalDeps;
  calls: Array<{ queryId: string; request: RecallRequest }>;
}

function fake(answers: Record<string, string[]>, missing: string[] = []): FakeRecall {
  const calls: FakeRecall['calls'] = [];
  return {
    calls,
    deps: {
      fixturesPresent: () => Promise.resolve({ missing }),
      recall: (q: GoldenQuery, request: RecallRequest) => {
        calls.push({ queryId: q.id, request });
        return Promise.resolve(answers[q.id] ?? []);
      },
      clock: stepClock(),
    },
  };
}

/** Every query answered with exactly its relevant fixtures, best grade first. */
const oracle = (set: GoldenSet): Record<string, string[]> =>
  Object.fromEntries(
    set.queries.map((q) => [
      q.id,
      [...q.relevant].sort((a, b) => (q.grades?.[b] ?? 1) - (q.grades?.[a] ?? 1)),
    ]),
  );

describe('runner', () => {
  it('scores every query and aggregates; a perfect recall scores 1 everywhere', async () => {
    const set = basic();
    const { deps, calls } = fake(oracle(set));
    const run = await runGoldenSet(set, deps, { recipe: 'hybrid' });
    if (run.status !== 'scored') throw new Error('expected a scored run');
    expect(run.format).toBe(1);
    expect(run.set).toEqual({
      name: 'basic',
      version: 1,
      namespace: 'eval/golden/basic',
      hash: goldenSetHash(set),
    });
    expect(run.recipe).toBe('hybrid');
    expect(run.k).toBe(10);
    expect(run.startedAt).toBe('2026-12-01T10:00:00.000Z');
    expect(run.finishedAt).toBe('2026-12-01T10:00:01.000Z');
    expect(run.perQuery.map((q) => q.queryId)).toEqual(set.queries.map((q) => q.id));
    expect(run.aggregate.n).toBe(set.queries.length);
    for (const v of Object.values(run.aggregate.means)) expect(v).toBe(1);
    expect(Object.keys(run.byTag)).toContain('constraint');
    // Recall is asked in the query's namespace (else the set's), for max(k, 10) items.
    const webhook = calls.find((c) => c.queryId === 'q-webhook')!;
    expect(webhook.request).toEqual({ recipe: 'hybrid', k: 10, namespace: 'eval/golden/basic/payments-api' });
    expect(calls.find((c) => c.queryId === 'q-refund')!.request.namespace).toBe('eval/golden/basic');
    // The query's own k (5) is what its @k metrics use.
    expect(run.perQuery.find((q) => q.queryId === 'q-webhook')!.k).toBe(5);
  });

  it('scores a partial answer with the hand-computed numbers', async () => {
    const set = basic();
    const answers = oracle(set);
    // q-rules: relevant {f-refund-window, f-no-pan-logs}; only f-no-pan-logs, at rank 3.
    answers['q-rules'] = ['f-db', 'f-currency', 'f-no-pan-logs'];
    // q-webhook: k = 5; grades retry 3, on-call 1; on-call at 1, retry at 6 (outside k, inside 10).
    answers['q-webhook'] = ['f-oncall', 'x1', 'x2', 'x3', 'x4', 'f-webhook-retry'];
    const run = await runGoldenSet(set, fake(answers).deps, { recipe: 'bm25', k: 10 });
    if (run.status !== 'scored') throw new Error('expected a scored run');
    const rules = run.perQuery.find((q) => q.queryId === 'q-rules')!;
    expect(rules.metrics).toEqual({
      hitAtK: 1,
      recallAnyAtK: 1,
      recallAllAtK: 0,
      recallAtK: 0.5,
      reciprocalRank: 1 / 3,
      // DCG = 1/log2 4 = 0.5; IDCG = 1 + 1/log2 3.
      ndcgAt10: 0.5 / (1 + 1 / log2_3),
    });
    const webhook = run.perQuery.find((q) => q.queryId === 'q-webhook')!;
    expect(webhook.metrics.recallAtK).toBe(0.5);
    expect(webhook.metrics.recallAllAtK).toBe(0);
    expect(webhook.metrics.reciprocalRank).toBe(1);
    // nDCG@10 sees rank 6: DCG = 1 + 3/log2 7; IDCG = 3 + 1/log2 3.
    expect(webhook.metrics.ndcgAt10).toBeCloseTo((1 + 3 / Math.log2(7)) / (3 + 1 / log2_3), 12);
    const n = set.queries.length;
    expect(run.aggregate.means.recallAllAtK).toBeCloseTo((n - 2) / n, 12);
    expect(run.aggregate.means.reciprocalRank).toBeCloseTo((n - 1 + 1 / 3) / n, 12);
    expect(run.byTag['multi-hop']).toEqual({ n: 1, means: rules.metrics });
  });

  it('skips a set whose fixtures are missing instead of scoring it zero', async () => {
    const set = basic();
    const { deps, calls } = fake({}, ['f-oncall', 'f-db', 'f-db', 'not-a-fixture']);
    const run = await runGoldenSet(set, deps, { recipe: 'hybrid' });
    expect(run.status).toBe('skipped');
    if (run.status !== 'skipped') return;
    expect(run.missing).toEqual(['f-db', 'f-oncall']);
    expect(run.reason).toContain('2 of 11 fixtures are missing');
    expect(calls).toEqual([]);
    expect(run).not.toHaveProperty('aggregate');
    expect(run).not.toHaveProperty('perQuery');
  });

  it('refuses a bad recipe name or k before asking anything', async () => {
    const { deps, calls } = fake({});
    expect((await rejected(runGoldenSet(basic(), deps, { recipe: '../x' }))).code).toBe('BAD_USER_INPUT');
    expect((await rejected(runGoldenSet(basic(), deps, { recipe: 'hybrid', k: 0 }))).code).toBe(
      'BAD_USER_INPUT',
    );
    expect(calls).toEqual([]);
  });
});

describe('seeding', () => {
  it('plans writes with deterministic idempotency keys from (set name, fixture id)', () => {
    const set = basic();
    const plan = seedPlan(set);
    expect(plan.map((p) => p.fixtureId)).toEqual(set.fixtures.map((f) => f.id));
    expect(plan[0]!.input.idempotencyKey).toBe('eval:basic:f-db');
    expect(new Set(plan.map((p) => p.input.idempotencyKey)).size).toBe(plan.length);
    expect(seedPlan(basic())).toEqual(plan);

    // A new version or new wording keeps the keys (re-seeding is a no-op or a visible CONFLICT) …
    const r = raw();
    r.version = 2;
    (r.fixtures as Array<{ statement: { text: string } }>)[0]!.statement.text = 'Reworded.';
    expect(seedPlan(parseGoldenSet(r)).map((p) => p.input.idempotencyKey)).toEqual(
      plan.map((p) => p.input.idempotencyKey),
    );
    // … another set name does not.
    expect(fixtureIdempotencyKey('other', 'f-db')).not.toBe(fixtureIdempotencyKey('basic', 'f-db'));
  });

  it('writes each fixture to its namespace with its pass-through fields, never its own key', () => {
    const r = raw();
    const f0 = (r.fixtures as Array<Record<string, unknown>>)[0]!;
    f0.idempotencyKey = 'hijack';
    f0.purpose = 'hijack';
    const plan = seedPlan(parseGoldenSet(r));
    const db = plan.find((p) => p.fixtureId === 'f-db')!.input;
    expect(db.namespace).toBe('eval/golden/basic/payments-api');
    expect(db.idempotencyKey).toBe('eval:basic:f-db');
    expect(db.purpose).toBe('eval:seed');
    expect(db.changesetId).toBe('eval:basic');
    expect(db.about).toEqual([{ alias: 'payments-api', type: 'service' }]);
    expect(db).not.toHaveProperty('id');
    expect(plan.find((p) => p.fixtureId === 'f-refund-window')!.input.namespace).toBe('eval/golden/basic');
    const decision = plan.find((p) => p.fixtureId === 'f-kafka-decision')!.input;
    expect(decision.class).toBe('DECISION');
    expect(decision.rationale).toMatch(/replay/);
  });

  it('refuses a database not marked as a test database, and writes nothing', async () => {
    const e = await rejected(assertTestDatabase({ isTestDatabase: () => Promise.resolve(false) }));
    expect(e.code).toBe('FORBIDDEN');
    expect(e.message).toContain('not marked as a test database');
    await expect(
      assertTestDatabase({ isTestDatabase: () => Promise.resolve(true) }),
    ).resolves.toBeUndefined();

    const written: string[] = [];
    const write = (rec: { fixtureId: string }): Promise<void> => {
      written.push(rec.fixtureId);
      return Promise.resolve();
    };
    const refused = await rejected(
      seedGoldenSet(basic(), { database: { isTestDatabase: () => Promise.resolve(false) }, write }),
    );
    expect(refused.code).toBe('FORBIDDEN');
    expect(written).toEqual([]);
    const ids = await seedGoldenSet(basic(), {
      database: { isTestDatabase: () => Promise.resolve(true) },
      write,
    });
    expect(written).toEqual(ids);
    expect(ids).toHaveLength(11);
  });
});

describe('stored runs', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'muninn-eval-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function scored(answers: Record<string, string[]>, start: string): Promise<ScoredRun> {
    const set = basic();
    const deps = { ...fake({ ...oracle(set), ...answers }).deps, clock: stepClock(start) };
    const run = await runGoldenSet(set, deps, { recipe: 'hybrid' });
    if (run.status !== 'scored') throw new Error('expected a scored run');
    return run;
  }

  it('writes one file per run, lists them oldest first and reads them back unchanged', async () => {
    const later = await scored({}, '2026-12-02T09:30:00.000Z');
    const earlier = await scored({}, '2026-12-01T09:30:00.000Z');
    const skipped = await runGoldenSet(
      basic(),
      { ...fake({}, ['f-db']).deps, clock: stepClock('2026-12-01T12:00:00.000Z') },
      { recipe: 'bm25' },
    );
    const p1 = await writeRun(nodeTextFiles, dir, later);
    await writeRun(nodeTextFiles, dir, earlier);
    await writeRun(nodeTextFiles, dir, skipped);
    expect(p1).toBe(join(dir, 'basic', '2026-12-02T09-30-00.000Z-hybrid.json'));
    expect(runFileName(skipped)).toBe('2026-12-01T12-00-00.000Z-bm25.json');
    // No temp file is left behind.
    expect((await readdir(join(dir, 'basic'))).sort()).toEqual([
      '2026-12-01T09-30-00.000Z-hybrid.json',
      '2026-12-01T12-00-00.000Z-bm25.json',
      '2026-12-02T09-30-00.000Z-hybrid.json',
    ]);
    const runs = await listRuns(nodeTextFiles, dir, 'basic');
    expect(runs.map((r) => [r.run.startedAt, r.run.status])).toEqual([
      ['2026-12-01T09:30:00.000Z', 'scored'],
      ['2026-12-01T12:00:00.000Z', 'skipped'],
      ['2026-12-02T09:30:00.000Z', 'scored'],
    ]);
    expect(await readRun(nodeTextFiles, p1)).toEqual(later);
    expect(runs[1]!.run).toEqual(skipped);
    expect(await listRuns(nodeTextFiles, dir, 'never-run')).toEqual([]);
    // The baseline of the later run is the earlier scored run of the same recipe, not the skipped one.
    expect(previousScored(runs, later)).toEqual(earlier);
    expect(previousScored(runs, earlier)).toBeUndefined();
  });

  it('fails closed on a stored file that is not a run, naming it', async () => {
    await writeRun(nodeTextFiles, dir, await scored({}, '2026-12-01T09:30:00.000Z'));
    await writeFile(join(dir, 'basic', 'broken.json'), '{"format": 1, "status": "scored"}');
    const e = await rejected(listRuns(nodeTextFiles, dir, 'basic'));
    expect(e.code).toBe('BAD_USER_INPUT');
    expect(e.message).toContain('broken.json');
    expect((await rejected(listRuns(nodeTextFiles, dir, '../etc'))).code).toBe('BAD_USER_INPUT');
    // A hand-made run never picks its own path.
    const run = await scored({}, '2026-12-03T09:30:00.000Z');
    expect((await rejected(writeRun(nodeTextFiles, dir, { ...run, recipe: '../../x' }))).code).toBe(
      'BAD_USER_INPUT',
    );
    expect((await rejected(writeRun(nodeTextFiles, dir, { ...run, startedAt: '../../x' }))).code).toBe(
      'BAD_USER_INPUT',
    );
    expect((await readdir(join(dir, 'basic'))).sort()).toEqual([
      '2026-12-01T09-30-00.000Z-hybrid.json',
      'broken.json',
    ]);
  });

  it('traces a regression to the query that moved', async () => {
    const before = await scored({}, '2026-12-01T09:30:00.000Z');
    // q-refund's answer falls from rank 1 to rank 2; q-rules loses f-refund-window entirely.
    const after = await scored(
      {
        'q-refund': ['f-db', 'f-refund-window'],
        'q-rules': ['f-no-pan-logs', 'f-db'],
      },
      '2026-12-02T09:30:00.000Z',
    );
    const c = compareRuns(before, after);
    expect(c.sameSet).toBe(true);
    expect(c.added).toEqual([]);
    expect(c.removed).toEqual([]);
    // q-rules drops recall_all by 1 (worst single drop), q-refund drops MRR by 0.5.
    expect(c.queries[0]!.queryId).toBe('q-rules');
    expect(c.queries[0]!.worstMetric).toBe('recallAllAtK');
    expect(c.queries[0]!.worstDrop).toBe(-1);
    expect(c.queries[0]!.lost).toEqual(['f-refund-window']);
    expect(c.queries[1]!.queryId).toBe('q-refund');
    expect(c.queries[1]!.worstMetric).toBe('reciprocalRank');
    expect(c.queries[1]!.delta.reciprocalRank).toBe(-0.5);
    expect(c.queries[1]!.lost).toEqual([]);
    expect(c.queries.slice(2).every((q) => q.worstDrop === 0 && q.worstMetric === null)).toBe(true);
    const n = before.perQuery.length;
    expect(c.aggregateDelta.reciprocalRank).toBeCloseTo(-0.5 / n, 12);
    expect(c.aggregateDelta.recallAllAtK).toBeCloseTo(-1 / n, 12);

    // The reverse comparison is an improvement: nothing dropped, the fixture is gained.
    const back = compareRuns(after, before);
    expect(back.queries.every((q) => q.worstDrop === 0)).toBe(true);
    expect(back.queries.find((q) => q.queryId === 'q-rules')!.gained).toEqual(['f-refund-window']);
  });

  it('reports added and removed queries and a changed set', async () => {
    const before = await scored({}, '2026-12-01T09:30:00.000Z');
    const r = raw();
    const qs = r.queries as Array<Record<string, unknown>>;
    qs[0] = { ...qs[0], id: 'q-db-2' };
    const set = parseGoldenSet(r);
    const after = await runGoldenSet(
      set,
      { ...fake(oracle(set)).deps, clock: stepClock('2026-12-02T00:00:00.000Z') },
      { recipe: 'hybrid' },
    );
    if (after.status !== 'scored') throw new Error('expected a scored run');
    const c = compareRuns(before, after);
    expect(c.sameSet).toBe(false);
    expect(c.added).toEqual(['q-db-2']);
    expect(c.removed).toEqual(['q-db']);
  });
});

describe('report', () => {
  it('prints the aggregate, each tag and the worst queries first', async () => {
    const set = basic();
    const answers = { ...oracle(set), 'q-currency': ['f-db'], 'q-post': ['x', 'f-pref-idempotency'] };
    const run = (await runGoldenSet(set, fake(answers).deps, { recipe: 'hybrid' })) as ScoredRun;
    expect(worstQueries(run, 2).map((q) => q.queryId)).toEqual(['q-currency', 'q-post']);
    const text = formatRun(run, { worst: 2 });
    expect(text).toContain('golden set basic v1');
    expect(text).toContain('recipe hybrid');
    for (const label of ['hit@10', 'recall_any@10', 'recall_all@10', 'recall@10', 'MRR', 'nDCG@10']) {
      expect(text).toContain(label);
    }
    expect(text).toMatch(/^all\s+10\s/m);
    expect(text).toMatch(/^tag preference\s+2\s+1\.000\s.*0\.750\s+0\.815$/m);
    expect(text).toContain('worst 2 of 10 queries');
    expect(text).toContain('(scored at their own k: q-webhook @5)');
    const lines = text.split('\n');
    const worst = lines.findIndex((l) => l.startsWith('worst'));
    expect(lines[worst + 2]).toMatch(/^q-currency\s/);
    expect(lines[worst + 3]).toMatch(/^q-post\s/);
  });

  it('prints a comparison with the query that dropped most', async () => {
    const set = basic();
    const before = (await runGoldenSet(set, fake(oracle(set)).deps, { recipe: 'hybrid' })) as ScoredRun;
    const after = (await runGoldenSet(set, fake({ ...oracle(set), 'q-kafka-why': [] }).deps, {
      recipe: 'hybrid',
    })) as ScoredRun;
    const text = formatRun(after, { comparison: compareRuns(before, after) });
    expect(text).toContain('queries that dropped most:');
    expect(text).toMatch(/^q-kafka-why\s+hit@k\s+-1\.000/m);
    expect(text).toContain('f-kafka-decision');
  });

  it('says a skipped run was skipped and prints no scores', async () => {
    const run: EvalRun = await runGoldenSet(basic(), fake({}, ['f-db', 'f-oncall']).deps, {
      recipe: 'hybrid',
    });
    const text = formatRun(run);
    expect(text).toContain('SKIPPED (not scored)');
    expect(text).toContain('missing fixtures: f-db, f-oncall');
    expect(text).not.toMatch(/(^|\s)\d\.\d{3}(\s|$)/m);
  });
});
