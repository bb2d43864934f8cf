// npm run bench:recall — issue #4: recall latency at scale. Prints figures, asserts nothing.
//  1. seeds one fresh tenant to each size in BENCH_SIZES (default 10000,100000; cumulative) through the
//     real projection path (test/bench/seed-records.ts), with ~20 records in one small namespace;
//  2. per size, recall through GraphQL on loopback after a warm-up: hybrid sequential and at 8 concurrent
//     callers, bm25 and vector briefly, hybrid with an anchor, a tenant-wide query and the narrow filter
//     (a namespace holding ~20 of the tenant's records). p50/p95/p99 end to end, plus the median of each
//     stage the recall service logs (embed, lexical, vector, graph, scope, fuse, pack);
//  3. the vector arm's two strategies timed as Cypher under namespace filters of every width: ANN with
//     over-fetch (as the arm runs it, and with larger fetches) vs the exact scan it falls back to, and an
//     exact scan whose namespace predicate can use the (tenant, namespace) index.
// MUNINN_EMBEDDER=hashing is recommended: seeding embeds every record (the local MiniLM does ~170 texts/s
// on 2 cores, i.e. ~10 min per 100k). BENCH_KEEP=1 keeps the tenant; otherwise it is deleted at the end.
// BENCH_TENANT=<t> reuses a tenant a previous run kept (seeding only what is missing; kept again).
// BENCH_CASE_SECONDS (default 60) caps each case: it stops issuing requests after that and says how many ran.
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { benchConfig } from './support.ts';
import {
  benchQuery,
  dropTenant,
  embedderNote,
  prng,
  randomLeaf,
  seedRecords,
  VOCAB,
} from './seed-records.ts';
import { createEmbedder, startMuninn } from '../../src/main.ts';
import { signDevToken } from '../../src/adapters/auth/dev-keys.ts';
import { createOnnxEmbedder } from '../../src/adapters/embedders/onnx-minilm.ts';
import { luceneQuery } from '../../src/adapters/neo4j/graph-store.ts';
import { namespaceChain } from '../../src/domain/model.ts';
import type { Logger } from '../../src/ports/logger.ts';

const SIZES = (process.env['BENCH_SIZES'] ?? '10000,100000')
  .split(',')
  .map((s) => Number(s.trim()))
  .filter((n) => Number.isInteger(n) && n > 0)
  .sort((a, b) => a - b);
const NARROW = 'bench/narrow/svc';
const NARROW_COUNT = 20;
const K = 10;
const CASE_SECONDS = Number(process.env['BENCH_CASE_SECONDS'] ?? 60);

// ── the recall service's own latency split, captured from its log line ────────────────────────────
type RecallLog = { ms: Record<string, number>; candidates: number; items: number };
let captured: RecallLog[] = [];
const capture: Logger = {
  debug: () => undefined,
  info: (obj) => {
    const o = obj as { op?: string; ms?: Record<string, number>; candidates?: number; items?: number };
    if (o.op === 'recall' && o.ms)
      captured.push({ ms: o.ms, candidates: o.candidates ?? 0, items: o.items ?? 0 });
  },
  warn: (obj, msg) => process.stderr.write(`warn: ${msg ?? ''} ${JSON.stringify(obj)}\n`),
  error: (obj, msg) => process.stderr.write(`error: ${msg ?? ''} ${JSON.stringify(obj)}\n`),
  child: () => capture,
};

const config = await benchConfig('recall');
const m = await startMuninn(config, capture);
const embedder = await createEmbedder(config);
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
  recallId tokens envelope items { handle record { id namespace } } } }`;
type RecallData = { recall: { items: Array<{ record: { id: string; namespace: string } }> } };

async function recall(input: Record<string, unknown>): Promise<{ ms: number; items: number }> {
  const t0 = performance.now();
  const res = await fetch(m.api!.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: RECALL, variables: { input: { purpose: 'bench', limit: K, ...input } } }),
  });
  const body = (await res.json()) as { data?: RecallData; errors?: unknown };
  const ms = performance.now() - t0;
  if (!body.data) throw new Error(`recall failed: ${JSON.stringify(body.errors)}`);
  return { ms, items: body.data.recall.items.length };
}

const pct = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
};
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '–');

interface Case {
  readonly name: string;
  readonly recipe: 'hybrid' | 'bm25' | 'vector';
  readonly n: number;
  readonly concurrency: number;
  readonly input: (rng: () => number) => Record<string, unknown>;
}

const STAGES = ['embed', 'anchors', 'lexical', 'vector', 'graph', 'scope', 'fuse', 'pack'];
const results: Array<{ size: number; name: string; p50: number; p95: number; p99: number }> = [];

async function runCase(size: number, c: Case): Promise<void> {
  const rng = prng(size ^ c.name.length ^ 0x2ec4);
  const inputs = Array.from({ length: c.n }, () => ({ recipe: c.recipe, ...c.input(rng) }));
  captured = [];
  const lat: number[] = [];
  const items: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const deadline = t0 + CASE_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: c.concurrency }, async () => {
      while (next < inputs.length && performance.now() < deadline) {
        const r = await recall(inputs[next++]!);
        lat.push(r.ms);
        items.push(r.items);
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  const seen = new Set(captured.flatMap((l) => Object.keys(l.ms)));
  const median = (stage: string) => {
    const xs = captured.map((l) => l.ms[stage] ?? 0);
    return f1(pct(xs, 50));
  };
  const stages = [...STAGES, ...[...seen].filter((s) => !STAGES.includes(s)).sort()]
    .filter((s) => seen.has(s))
    .map((s) => `${s} ${median(s)}`)
    .join(', ');
  const candidates = captured.map((l) => l.candidates);
  const row = { size, name: c.name, p50: pct(lat, 50), p95: pct(lat, 95), p99: pct(lat, 99) };
  results.push(row);
  console.log(
    `  ${c.name.padEnd(34)} n=${String(lat.length).padEnd(4)} p50 ${f1(row.p50).padStart(6)}  p95 ${f1(row.p95).padStart(6)}  ` +
      `p99 ${f1(row.p99).padStart(6)} ms  (${(lat.length / wall).toFixed(1)} req/s; items p50 ${pct(items, 50)}, min ${Math.min(...items)}; ` +
      `candidates p50 ${pct(candidates, 50)})`,
  );
  console.log(`  ${''.padEnd(34)} stage medians (ms): ${stages}`);
}

const leaf = (rng: () => number) => ({ query: benchQuery(rng), namespace: randomLeaf(rng) });
const CASES: Case[] = [
  { name: 'hybrid, service ns, sequential', recipe: 'hybrid', n: 200, concurrency: 1, input: leaf },
  { name: 'hybrid, service ns, 8 concurrent', recipe: 'hybrid', n: 400, concurrency: 8, input: leaf },
  { name: 'bm25, service ns, sequential', recipe: 'bm25', n: 100, concurrency: 1, input: leaf },
  { name: 'vector, service ns, sequential', recipe: 'vector', n: 100, concurrency: 1, input: leaf },
  {
    name: 'hybrid + anchor, service ns, seq',
    recipe: 'hybrid',
    n: 100,
    concurrency: 1,
    input: (rng) => ({
      ...leaf(rng),
      anchors: [{ alias: VOCAB.services[Math.floor(rng() * VOCAB.services.length)], type: 'service' }],
    }),
  },
  {
    name: 'hybrid, tenant-wide ns, sequential',
    recipe: 'hybrid',
    n: 100,
    concurrency: 1,
    input: (rng) => ({ query: benchQuery(rng), namespace: 'bench' }),
  },
  {
    name: `hybrid, narrow ns (${NARROW_COUNT}), sequential`,
    recipe: 'hybrid',
    n: 100,
    concurrency: 1,
    input: (rng) => ({ query: benchQuery(rng), namespace: NARROW }),
  },
  {
    name: `hybrid, narrow ns (${NARROW_COUNT}), 8 concurrent`,
    recipe: 'hybrid',
    n: 200,
    concurrency: 8,
    input: (rng) => ({ query: benchQuery(rng), namespace: NARROW }),
  },
  {
    name: `vector, narrow ns (${NARROW_COUNT}), sequential`,
    recipe: 'vector',
    n: 100,
    concurrency: 1,
    input: (rng) => ({ query: benchQuery(rng), namespace: NARROW }),
  },
];

// ── the vector arm's strategies as Cypher ─────────────────────────────────────────────────────────
// Mirrors Neo4jGraphStore.vectorArm with a whole-tenant read scope (the scope's grant check is a constant
// per-row filter and is left out, so the figures isolate the candidate strategy).
const FILTER = `n.tenant = $tenant
  AND (n.namespace IN $chain OR n.namespace STARTS WITH $ns + '/')
  AND n.status IN ['ACTIVE', 'CONTESTED']
  AND n.validFrom <= $validAt AND coalesce(n.validTo, $eot) > $validAt`;
const STRATEGIES: Record<string, string> = {
  ann: `CALL db.index.vector.queryNodes('record_embedding', toInteger($fetch), $vector) YIELD node AS n, score
        WHERE ${FILTER} RETURN n.id AS id ORDER BY score DESC, id LIMIT toInteger($k)`,
  exact: `MATCH (n:Record {tenant: $tenant}) WHERE ${FILTER} AND n.embedding IS NOT NULL
          WITH n, vector.similarity.cosine(n.embedding, $vector) AS score
          RETURN n.id AS id ORDER BY score DESC, id LIMIT toInteger($k)`,
  exactSeek: `CALL () {
            MATCH (n:Record) WHERE n.tenant = $tenant AND n.namespace IN $chain RETURN n
            UNION
            MATCH (n:Record) WHERE n.tenant = $tenant AND n.namespace STARTS WITH $ns + '/' RETURN n }
          WITH n WHERE ${FILTER} AND n.embedding IS NOT NULL
          WITH n, vector.similarity.cosine(n.embedding, $vector) AS score
          RETURN n.id AS id ORDER BY score DESC, id LIMIT toInteger($k)`,
};

const params = (ns: string, v: Float32Array) => ({
  tenant,
  ns,
  chain: namespaceChain(ns),
  validAt: new Date().toISOString(),
  eot: '9999-12-31T23:59:59.999Z',
  vector: Array.from(v),
});
type Profile = { dbHits?: number; children?: Profile[] } | false | null | undefined;
const dbHits = (p: Profile): number =>
  p ? (p.dbHits ?? 0) + (p.children ?? []).reduce((s, c) => s + dbHits(c), 0) : 0;

/** The lexical arm streams every fulltext match of every tenant by score and filters after: how many. */
async function lexicalStreams(): Promise<void> {
  const rng = prng(0x1e7);
  const streamed: number[] = [];
  const kept: number[] = [];
  const ms: number[] = [];
  for (let i = 0; i < 20; i++) {
    const lucene = luceneQuery(benchQuery(rng));
    const t0 = performance.now();
    const r = await m.store.db.read(
      'bench.lexical',
      `CALL db.index.fulltext.queryNodes('record_text', $lucene) YIELD node AS n
       RETURN count(n) AS all, count(CASE WHEN n.tenant = $tenant AND n.namespace = $ns THEN 1 END) AS kept`,
      { lucene, tenant, ns: NARROW },
    );
    ms.push(performance.now() - t0);
    streamed.push(Number(r.records[0]!.get('all')));
    kept.push(Number(r.records[0]!.get('kept')));
  }
  console.log(
    `  lexical arm: a query's fulltext matches (all tenants) p50 ${pct(streamed, 50)}, of which in ${NARROW} p50 ${pct(kept, 50)}; ` +
      `streaming them all takes p50 ${f1(pct(ms, 50))} ms`,
  );
}

async function vectorStrategies(): Promise<void> {
  const rng = prng(0xa11);
  const filters: Array<[string, string]> = [
    [`narrow (${NARROW_COUNT} records)`, NARROW],
    ['service leaf', randomLeaf(rng)],
    ['team', 'bench/t3/team4'],
    ['tribe', 'bench/t3'],
    ['tenant-wide', 'bench'],
  ];
  const sizes = await m.store.db.read(
    'bench.subtrees',
    `UNWIND $nss AS ns
     CALL (ns) { MATCH (n:Record) WHERE n.tenant = $tenant AND (n.namespace = ns OR n.namespace STARTS WITH ns + '/')
                 RETURN count(n) AS c }
     RETURN ns, c`,
    { tenant, nss: filters.map(([, ns]) => ns) },
  );
  const count = new Map(sizes.records.map((r) => [String(r.get('ns')), Number(r.get('c'))]));
  const queries = await embedder.embed(Array.from({ length: 20 }, () => benchQuery(rng)));
  const k = 50; // recipe perArmK
  const variants: Array<[string, string, number]> = [
    ['ANN fetch 200', 'ann', 200],
    ['ANN fetch 1000 (the arm: max(200, 20k))', 'ann', 1000],
    ['ANN fetch 5000', 'ann', 5000],
    ['exact, tenant index (the arm fallback)', 'exact', 0],
    ['exact, (tenant,ns) index seek', 'exactSeek', 0],
  ];
  console.log(
    `  vector arm strategies, k=${k}, up to 20 queries each: median ms / p95 ms / median rows returned / db hits (PROFILE, one query)`,
  );
  for (const [label, ns] of filters) {
    const cells: string[] = [];
    for (const [vname, key, fetch] of variants) {
      const times: number[] = [];
      const rows: number[] = [];
      const until = performance.now() + (CASE_SECONDS / 2) * 1000;
      for (const [i, v] of [queries[0]!, ...queries].entries()) {
        if (i > 3 && performance.now() > until) break;
        const t0 = performance.now();
        const r = await m.store.db.read('bench.vector', STRATEGIES[key]!, { ...params(ns, v), k, fetch });
        if (i === 0) continue; // the first run warms the plan cache
        times.push(performance.now() - t0);
        rows.push(r.records.length);
      }
      const profiled = await m.store.db.read('bench.vector', `PROFILE ${STRATEGIES[key]!}`, {
        ...params(ns, queries[0]!),
        k,
        fetch,
      });
      const hits = dbHits(profiled.summary.profile);
      cells.push(`${vname}: ${f1(pct(times, 50))} / ${f1(pct(times, 95))} / ${pct(rows, 50)} / ${hits}`);
    }
    console.log(`  - ${label}, ${ns} (${count.get(ns) ?? '?'} records in subtree):`);
    for (const c of cells) console.log(`      ${c}`);
  }
}

// ── run ───────────────────────────────────────────────────────────────────────────────────────────
console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}`);
console.log(`tenant ${tenant}; sizes ${SIZES.join(', ')}; ${embedderNote(embedder)}`);
if (embedder.modelId.startsWith('hashing')) {
  const dir = '.stack/models/all-MiniLM-L6-v2';
  if (existsSync(`${dir}/model.onnx`)) {
    const onnx = await createOnnxEmbedder(dir);
    const rng = prng(7);
    const lat: number[] = [];
    for (let i = 0; i < 60; i++) {
      const t0 = performance.now();
      await onnx.embed([benchQuery(rng)]);
      if (i >= 10) lat.push(performance.now() - t0);
    }
    await onnx.close?.();
    console.log(
      `note: with the hashing embedder the embed stage is ~0 ms; the local MiniLM embeds one query in p50 ${f1(pct(lat, 50))} ms, p95 ${f1(pct(lat, 95))} ms here (add it for a production estimate)`,
    );
  }
}

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
        embedder,
        seed: size,
        ...(narrowHave === 0 ? { narrow: { namespace: NARROW, count: NARROW_COUNT } } : {}),
      });
      narrowHave = NARROW_COUNT;
      have = Math.max(have, size);
    } else if (size < have) {
      console.log(`[${size / 1000}k] skipped: tenant ${tenant} already holds ${have} records`);
      continue;
    }
    console.log(`[${size / 1000}k records] warm-up…`);
    const wrng = prng(1);
    for (let i = 0; i < 60; i++)
      await recall({ ...leaf(wrng), recipe: (['hybrid', 'bm25', 'vector'] as const)[i % 3] });
    for (let i = 0; i < 20; i++)
      await recall({ query: benchQuery(wrng), namespace: NARROW, recipe: 'hybrid' });
    console.log(
      `[${size / 1000}k records] recall through GraphQL on loopback (k=${K}); load average ${loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}:`,
    );
    for (const c of CASES) await runCase(size, c);
    await vectorStrategies();
    await lexicalStreams();
  }
} finally {
  const largest = SIZES[SIZES.length - 1]!;
  const main = results.find((r) => r.size === largest && r.name === CASES[0]!.name);
  console.log(
    `goal: p95 <= 50 ms at 100k${main ? ` — measured hybrid sequential p95 ${f1(main.p95)} ms at ${largest / 1000}k (${main.p95 <= 50 ? 'met' : 'NOT met'})` : ''}`,
  );
  if (process.env['BENCH_KEEP'] !== '1' && !reuse) {
    const t0 = performance.now();
    const n = await dropTenant(m.store, tenant);
    console.log(`dropped tenant ${tenant} (${n} nodes) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  } else console.log(`kept tenant ${tenant} (BENCH_KEEP=1 or BENCH_TENANT)`);
  await embedder.close?.();
  await m.stop();
}
process.exit(0);
