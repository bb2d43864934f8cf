// npm run bench:recall — issue #10: recall latency at 100k records in one tenant. Prints figures, asserts nothing.
//  1. seeds one tenant to each size in BENCH_SIZES (default 100000) through the real projection path
//     (test/bench/seed-records.ts): 30 service namespaces bench/t<i>/team<j>/svc<k> of ~3k records each at
//     100k, their team and tribe namespaces, and one 20-record namespace (bench/narrow/svc);
//  2. recalls through GraphQL on loopback (hybrid, k=10) after a warm-up, in three scopes — the 20-record
//     namespace, a service namespace, the whole tenant (namespace `bench`) — each with sequential callers
//     and with 8 concurrent callers: p50/p95/p99 end to end, tokens returned, and the median of each stage
//     the recall service logs (embed, anchors, lexical, vector, graph, scope, records, fuse, pack);
//  3. PROFILEs every statement one recall sends in each scope, through the one Cypher executor (its
//     observer sees the exact Cypher and parameters): time as run, rows, db hits, the costliest operators;
//  4. replays the statements of BENCH_REPLAY recalls per scope (default 30; 0 skips), each alone, best of
//     three: Neo4j's server time and the wall time per recall (statement-replay.ts), steadier than the
//     end-to-end figures for comparing two builds on a loaded machine.
// Queries are embedded by the server's embedder (MUNINN_EMBEDDER, default the local model). Seeding embeds
// with the same one by default, since the vector arm compares only vectors of the query's model (a record
// embedded by another model is not found by vector): 100k local-model embeddings take ~18 min on 2 idle
// cores. MUNINN_EMBEDDER=hashing seeds and queries with feature hashes — much faster, timing everything
// but the model (bench:embed times that). BENCH_SEED_EMBEDDER=hashing under a local server warns: the
// vector arm then finds none of the seeded records. BENCH_QUICK=1 is the CI-short
// setting (2000 records, a few dozen recalls per case, no PROFILE). BENCH_KEEP=1 keeps the tenant;
// BENCH_TENANT=<t> reuses a kept one (seeding only what is missing). BENCH_CASE_SECONDS caps each case.
import { cpus, loadavg } from 'node:os';
import { benchConfig } from './support.ts';
import {
  benchQuery,
  dropTenant,
  embedderNote,
  prng,
  leafNamespace,
  randomLeaf,
  seedRecords,
  type Layout,
} from './seed-records.ts';
import { createEmbedder } from '../../src/compose.ts';
import { startMuninn } from '../../src/main.ts';
import { signDevToken } from '../../src/adapters/auth/dev-keys.ts';
import { createHashingEmbedder } from '../../src/adapters/embedders/hashing.ts';
import type { Logger } from '../../src/ports/logger.ts';
import { replayStatements, statementsOf } from './statement-replay.ts';

const QUICK = process.env['BENCH_QUICK'] === '1';
const SIZES = (process.env['BENCH_SIZES'] ?? (QUICK ? '2000' : '100000'))
  .split(',')
  .map((s) => Number(s.trim()))
  .filter((n) => Number.isInteger(n) && n > 0)
  .sort((a, b) => a - b);
const LAYOUT: Layout = { root: 'bench', tribes: 5, teams: 3, services: 2 };
const NARROW = 'bench/narrow/svc';
const NARROW_COUNT = 20;
const K = 10;
const SEQ_N = QUICK ? 30 : 200;
const CONC_N = QUICK ? 60 : 400;
const CASE_SECONDS = Number(process.env['BENCH_CASE_SECONDS'] ?? (QUICK ? 15 : 90));
const TARGET = { sequential: 50, concurrent: 150 };

// ── the recall service's own latency split, captured from its log line ────────────────────────────
type RecallLog = { ms: Record<string, number>; tokens: number };
let captured: RecallLog[] = [];
const capture: Logger = {
  debug: () => undefined,
  info: (obj) => {
    const o = obj as { op?: string; ms?: Record<string, number>; tokens?: number };
    if (o.op === 'recall' && o.ms) captured.push({ ms: o.ms, tokens: o.tokens ?? 0 });
  },
  warn: (obj, msg) => process.stderr.write(`warn: ${msg ?? ''} ${JSON.stringify(obj)}\n`),
  error: (obj, msg) => process.stderr.write(`error: ${msg ?? ''} ${JSON.stringify(obj)}\n`),
  child: () => capture,
};

const config = await benchConfig('recall');
const m = await startMuninn(config, capture);
const seedKind = process.env['BENCH_SEED_EMBEDDER'] ?? 'server';
const seedEmbedder: Awaited<ReturnType<typeof createEmbedder>> =
  seedKind === 'hashing' ? createHashingEmbedder(384) : await createEmbedder(config);
const mismatch = seedKind === 'hashing' && config.embedder.kind !== 'hashing';
const reuse = process.env['BENCH_TENANT'];
const tenant = reuse ?? `bench-recall-${config.kafka.groupId.split('-').pop()!}`;
const token = await signDevToken({
  stateDir: config.stateDir,
  issuer: config.auth.issuer,
  audience: config.auth.audience,
  tenant,
  sub: 'bench',
  scopes: ['read'],
  ttlSeconds: 4 * 3600,
});

const RECALL = `query R($input: RecallInput!) { recall(input: $input) {
  recallId tokens items { handle record { id namespace } } } }`;
type RecallData = { recall: { tokens: number; items: Array<{ record: { id: string } }> } };

async function recall(
  input: Record<string, unknown>,
): Promise<{ ms: number; items: number; tokens: number }> {
  const t0 = performance.now();
  const res = await fetch(m.api!.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: RECALL, variables: { input: { purpose: 'bench', limit: K, ...input } } }),
  });
  const body = (await res.json()) as { data?: RecallData; errors?: unknown };
  const ms = performance.now() - t0;
  if (!body.data) throw new Error(`recall failed: ${JSON.stringify(body.errors)}`);
  return { ms, items: body.data.recall.items.length, tokens: body.data.recall.tokens };
}

const pct = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
};
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '–');
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

interface Scope {
  readonly name: string;
  readonly namespace: (rng: () => number) => string;
}
const SCOPES: Scope[] = [
  { name: `${NARROW_COUNT}-record namespace`, namespace: () => NARROW },
  { name: 'service namespace', namespace: (rng) => randomLeaf(rng, LAYOUT) },
  { name: 'whole tenant', namespace: () => LAYOUT.root },
];
const STAGES = ['embed', 'anchors', 'lexical', 'vector', 'graph', 'scope', 'records', 'fuse', 'pack'];
const summary: Array<{ size: number; scope: string; callers: number; p50: number; p95: number }> = [];

async function runCase(size: number, scope: Scope, callers: number): Promise<void> {
  const rng = prng(size ^ scope.name.length ^ (callers << 8));
  const n = callers === 1 ? SEQ_N : CONC_N;
  const inputs = Array.from({ length: n }, () => ({
    query: benchQuery(rng),
    namespace: scope.namespace(rng),
  }));
  captured = [];
  const lat: number[] = [];
  const items: number[] = [];
  const tokens: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const deadline = t0 + CASE_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (next < inputs.length && performance.now() < deadline) {
        const r = await recall(inputs[next++]!);
        lat.push(r.ms);
        items.push(r.items);
        tokens.push(r.tokens);
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  const stages = STAGES.filter((s) => captured.some((l) => s in l.ms))
    .map(
      (s) =>
        `${s} ${f1(
          pct(
            captured.map((l) => l.ms[s] ?? 0),
            50,
          ),
        )}`,
    )
    .join(', ');
  const row = { size, scope: scope.name, callers, p50: pct(lat, 50), p95: pct(lat, 95) };
  summary.push(row);
  const who = callers === 1 ? 'sequential' : `${callers} concurrent`;
  console.log(
    `  ${`${scope.name}, ${who}`.padEnd(38)} n=${String(lat.length).padEnd(4)} p50 ${f1(row.p50).padStart(6)}  ` +
      `p95 ${f1(row.p95).padStart(6)}  p99 ${f1(pct(lat, 99)).padStart(6)} ms  (${(lat.length / wall).toFixed(1)} req/s; ` +
      `items p50 ${pct(items, 50)}; tokens returned p50 ${pct(tokens, 50)}, max ${Math.max(...tokens)})`,
  );
  console.log(`  ${''.padEnd(38)} stage medians (ms): ${stages}`);
}

// ── PROFILE of every statement one recall sends, through the executor's observer ─────────────────
type Plan = { operatorType?: string; dbHits?: number; rows?: number; children?: Plan[] };
const operators = (p: Plan | undefined): Array<{ op: string; hits: number; rows: number }> =>
  p
    ? [
        { op: (p.operatorType ?? '?').replace(/@.*/, ''), hits: p.dbHits ?? 0, rows: p.rows ?? 0 },
        ...(p.children ?? []).flatMap(operators),
      ]
    : [];

async function profileScope(scope: Scope): Promise<void> {
  const rng = prng(0x9f);
  const input = { query: benchQuery(rng), namespace: scope.namespace(rng) };
  const runs = await statementsOf(m.store.db, () => recall(input));
  console.log(`  ${scope.name} (${input.namespace}), "${input.query}":`);
  for (const r of runs) {
    const res = await m.store.db.read('bench.profile', `PROFILE ${r.cypher}`, r.params);
    const ops = operators(res.summary.profile as Plan | undefined);
    const hits = ops.reduce((s, o) => s + o.hits, 0);
    const top = [...ops]
      .sort((a, b) => b.hits - a.hits)
      .slice(0, 3)
      .map((o) => `${o.op} ${o.hits}`)
      .join(', ');
    console.log(
      `    ${r.op.padEnd(22)} ${f1(r.ms).padStart(6)} ms as run, ${String(r.rows).padStart(4)} rows, ${String(hits).padStart(7)} db hits (${top})`,
    );
  }
}

// ── run ───────────────────────────────────────────────────────────────────────────────────────────
console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}`);
console.log(`tenant ${tenant}; sizes ${SIZES.join(', ')}${QUICK ? ' (BENCH_QUICK)' : ''}`);
console.log(
  `queries embedded by the ${config.embedder.kind} embedder (MUNINN_EMBEDDER); seeding: ${embedderNote(seedEmbedder)}`,
);
if (mismatch)
  console.log(
    "WARNING: seeded with hashing vectors, queried with the local model: the vector arm finds none of the seeded records (it compares only one model's vectors), so its timing is not a real search's",
  );

const counted = await m.store.db.read(
  'bench.count',
  `MATCH (n:Record {tenant: $tenant}) RETURN count(CASE WHEN n.namespace STARTS WITH 'bench/t' THEN 1 END) AS bulk,
     count(CASE WHEN n.namespace = $narrow THEN 1 END) AS narrow`,
  { tenant, narrow: NARROW },
);
let have = Number(counted.records[0]?.get('bulk') ?? 0);
let narrowHave = Number(counted.records[0]?.get('narrow') ?? 0);
if (reuse) console.log(`reusing tenant ${tenant}: ${have} records in the layout, ${narrowHave} in ${NARROW}`);
try {
  for (const size of SIZES) {
    if (size > have || narrowHave === 0) {
      await seedRecords(m.store, {
        tenant,
        count: Math.max(0, size - have),
        layout: LAYOUT,
        embedder: seedEmbedder,
        seed: size,
        ...(narrowHave === 0 ? { narrow: { namespace: NARROW, count: NARROW_COUNT } } : {}),
      });
      narrowHave = NARROW_COUNT;
      have = Math.max(have, size);
    } else if (size < have) {
      console.log(`[${size / 1000}k] skipped: tenant ${tenant} already holds ${have} records`);
      continue;
    }
    console.log(`[${have / 1000}k records] warm-up…`);
    const wrng = prng(1);
    // Warm means every namespace the cases recall in was recalled in once: the first recall of a scope
    // loads its vectors into the process (scope-vectors.ts), timed here and printed as the cold cost.
    const cold: number[] = [];
    for (let i = 0; i < LAYOUT.tribes; i++)
      for (let j = 0; j < LAYOUT.teams; j++)
        for (let k = 0; k < LAYOUT.services; k++)
          cold.push(
            (await recall({ query: benchQuery(wrng), namespace: leafNamespace(LAYOUT, i, j, k) })).ms,
          );
    console.log(
      `  first recall in each of ${cold.length} service namespaces (cold): p50 ${pct(cold, 50).toFixed(1)}  p95 ${pct(cold, 95).toFixed(1)}  max ${Math.max(...cold).toFixed(1)} ms`,
    );
    for (let i = 0; i < (QUICK ? 30 : 90); i++)
      await recall({ query: benchQuery(wrng), namespace: SCOPES[i % 3]!.namespace(wrng) });
    console.log(
      `[${have / 1000}k records] hybrid recall through GraphQL on loopback (k=${K}); load average ${load()}:`,
    );
    for (const scope of SCOPES) for (const callers of [1, 8]) await runCase(size, scope, callers);
    console.log(`  load average after the cases: ${load()}`);
    if (!QUICK || process.env['BENCH_PROFILE'] === '1') {
      console.log(`[${have / 1000}k records] PROFILE of each statement of one recall:`);
      for (const scope of SCOPES) await profileScope(scope);
    }
    const replays = Number(process.env['BENCH_REPLAY'] ?? (QUICK ? 0 : 30));
    if (replays > 0) {
      console.log(
        `[${have / 1000}k records] statements of ${replays} recalls replayed alone, server / wall per recall:`,
      );
      for (const scope of SCOPES) {
        const rng = prng(0x51);
        const line = await replayStatements(m.store.db, replays, () =>
          recall({ query: benchQuery(rng), namespace: scope.namespace(rng) }),
        );
        console.log(`  ${scope.name}: ${line}`);
      }
    }
  }
} finally {
  console.log(
    `goal (issue #10, at 100k): p95 <= ${TARGET.sequential} ms sequential, <= ${TARGET.concurrent} ms with 8 concurrent callers`,
  );
  for (const r of summary) {
    const target = r.callers === 1 ? TARGET.sequential : TARGET.concurrent;
    console.log(
      `  ${r.size / 1000}k ${`${r.scope}, ${r.callers === 1 ? 'sequential' : `${r.callers} concurrent`}`.padEnd(38)} ` +
        `p50 ${f1(r.p50).padStart(6)}  p95 ${f1(r.p95).padStart(6)} ms  ${r.p95 <= target ? 'met' : 'NOT met'}`,
    );
  }
  if (process.env['BENCH_KEEP'] !== '1' && !reuse) {
    const t0 = performance.now();
    const n = await dropTenant(m.store, tenant);
    console.log(`dropped tenant ${tenant} (${n} nodes) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  } else console.log(`kept tenant ${tenant} (BENCH_KEEP=1 or BENCH_TENANT)`);
  await seedEmbedder.close?.();
  await m.stop();
}
process.exit(0);
