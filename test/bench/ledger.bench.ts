// npm run bench:ledger — prints figures, asserts nothing.
//  1. the embedder's own rate (texts/s at batch 32) beside the sustained `propose` rate through GraphQL on
//     loopback (await: false, closed loop, BENCH_CALLERS=64), BENCH_SECONDS per phase (10), and the
//     floor: the same callers sending `{ __typename }` (a third of BENCH_SECONDS, at least 3 s);
//  2. projection lag (send → applied) p50/p99 at half and at twice the sustained rate (BENCH_RATES to
//     choose), open loop, with the writes the overload guard refused counted apart;
//  3. rebuild speed over 100k events (BENCH_REBUILD_EVENTS), which EMPTIES the graph: it only runs when
//     the graph holds no records or BENCH_ALLOW_WIPE=1.
//  BENCH_PROJECTOR=process runs the projector as its own process (`muninn serve --role projector`);
//  BENCH_API_PROCESSES=n runs n servers and spreads the client's calls over them.
//  The server is `muninn serve` in a child process (the API and, unless split, the projector), as users
//  reach it: the bench's client shares no event loop with it. BENCH_SERVER=inline runs it in this process
//  instead and prints the statements of the closed loop by op (an observer on its executor); the client's
//  own work then counts in the server's event loop (in the overload rule's utilisation too).
import { randomUUID } from 'node:crypto';
import { cpus, tmpdir } from 'node:os';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { load } from '../../src/config/index.ts';
import { connectAdapters, createEmbedder } from '../../src/compose.ts';
import { startMuninn } from '../../src/main.ts';
import { ensureDevKeys, signDevToken } from '../../src/adapters/auth/dev-keys.ts';
import { silentLogger } from '../../src/ports/logger.ts';
import { freePort, spawnServe, waitReady } from '../support/processes.ts';
import { cpuShare } from './cpu-share.ts';
import { benchRebuild } from './rebuild-phase.ts';
import { unboundedBudgetsPolicy } from './support.ts';
import { scrapeStages, stageMeans } from './write-stages.ts';

const suffix = randomUUID().slice(0, 8);
const stateDir = mkdtempSync(join(tmpdir(), 'muninn-bench-'));
// BENCH_PROJECTOR=process: the API here (MUNINN_ROLE=api) and `muninn serve --role projector` as its own
// process, as a deployment runs them; otherwise both in this process.
const SPLIT = process.env['BENCH_PROJECTOR'] === 'process';
// The write budgets (per writer and namespace: 10 writes/s, burst 200) would bound what this measures:
// its 12 writers write one namespace each, so the default policy admits ~120 writes/s once the bursts are
// spent. The bench measures the machine, so its policy is the default with budgets that never bind
// (BENCH_BUDGETS=default keeps the default policy: the figures then show the budgets at work).
const DEFAULT_BUDGETS = process.env['BENCH_BUDGETS'] === 'default';
const policyFile = unboundedBudgetsPolicy(stateDir);
const shared = {
  ...(DEFAULT_BUDGETS ? {} : { MUNINN_POLICY_FILE: policyFile }),
  MUNINN_ENV: 'test',
  MUNINN_STATE_DIR: stateDir,
  MUNINN_LOG_LEVEL: 'silent',
  MUNINN_LEDGER_TOPIC: `muninn.bench.${suffix}`,
  MUNINN_DLQ_TOPIC: `muninn.bench.${suffix}.dlq`,
  MUNINN_PROJECTOR_GROUP: `bench-${suffix}`,
};
const SERVER = process.env['BENCH_SERVER'] !== 'inline';
// BENCH_API_PROCESSES=n: n servers (each `all`, or `api` beside the projector process), the client's
// calls spread over them in turn — one process's event loop is one core, and the machine has more.
const API_PROCESSES = SERVER ? Math.max(1, Number(process.env['BENCH_API_PROCESSES'] ?? 1)) : 1;
// Each API process serves its Prometheus figures on a port of its own: the writes' stages are read there.
const metricsPorts = await Promise.all(Array.from({ length: API_PROCESSES }, () => freePort()));
const metricsUrls = metricsPorts.map((p) => `http://127.0.0.1:${p}/metrics`);
const config = load({
  ...process.env,
  ...shared,
  MUNINN_PORT: '0',
  MUNINN_ROLE: SPLIT ? 'api' : 'all',
  ...(SERVER ? {} : { MUNINN_METRICS_PORT: String(metricsPorts[0]) }),
});
await ensureDevKeys(stateDir);
const serverPorts = SERVER ? await Promise.all(Array.from({ length: API_PROCESSES }, () => freePort())) : [];
const m = SERVER ? null : await startMuninn(config, silentLogger);
const servers = serverPorts.map((port, i) =>
  spawnServe(
    SPLIT ? 'api' : 'all',
    { ...shared, MUNINN_PORT: String(port), MUNINN_METRICS_PORT: String(metricsPorts[i]) },
    'ignore',
  ),
);
const projector = SPLIT
  ? spawnServe('projector', { ...shared, MUNINN_PORT: String(await freePort()) }, 'ignore')
  : null;
// A bench that throws must not leave its servers running (they would keep a consumer group and a port).
process.on('exit', () => {
  for (const child of [...servers, projector])
    if (child && child.child.exitCode === null) child.child.kill('SIGKILL');
});
const urls = m ? [m.api!.url] : serverPorts.map((port) => `http://127.0.0.1:${port}/graphql`);
if (servers.length > 0) await Promise.all(urls.map((u) => waitReady(u.replace(/\/graphql$/, ''))));
// The checkpoints the lag is read from: this process's store, or adapters of its own beside a child server.
const adapters = m ? null : connectAdapters(config, silentLogger);
const graph = m ? m.store : adapters!.store;
const tenants = Array.from({ length: 12 }, (_, i) => `bench-${i}`);
const tokens = await Promise.all(
  tenants.map((tenant) =>
    signDevToken({
      stateDir,
      issuer: config.auth.issuer,
      audience: config.auth.audience,
      tenant,
      sub: 'bench',
      scopes: ['read', 'write'],
      ttlSeconds: 3600,
    }),
  ),
);
const MUTATION = 'mutation P($input: ProposeInput!) { propose(input: $input) { outcome position } }';
let seq = 0;

/** POSTs a GraphQL body as the i-th call (its server and token in turn) and returns the parsed answer. */
async function post(i: number, body: string): Promise<unknown> {
  const res = await fetch(urls[i % urls.length]!, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[i % tokens.length]}` },
    body,
  });
  return res.json();
}

async function propose(): Promise<{ position: string; sentAt: number }> {
  const i = seq++;
  const sentAt = performance.now();
  const body = (await post(
    i,
    JSON.stringify({
      query: MUTATION,
      variables: {
        input: {
          namespace: 'bench/load',
          class: 'FACT',
          // New to the graph in every run (the run's id in each), so the loop measures admissions: with
          // the same statements in every run, the runs after the first measured only reinforcements.
          statement: {
            subject: `s${i} of ${suffix}`,
            predicate: 'is',
            object: `o${i}`,
            text: `Bench statement number ${i} of run ${suffix}.`,
          },
          purpose: 'bench',
          idempotencyKey: `b-${suffix}-${i}`,
          await: false,
        },
      },
    }),
  )) as {
    data?: { propose: { position: string } } | null;
    errors?: Array<{ extensions?: { code?: string } }>;
  };
  if (!body.data) {
    const code = body.errors?.[0]?.extensions?.code;
    const ext = (body.errors?.[0]?.extensions ?? {}) as Record<string, unknown>;
    throw Object.assign(new Error(`propose failed: ${JSON.stringify(body.errors)}`), {
      code,
      retryAfterMs: ext['retryAfterMs'] as number | undefined,
      rule: ruleOf(ext),
      ms: performance.now() - sentAt,
    });
  }
  return { position: body.data.propose.position, sentAt };
}

/** Which overload rule refused a write, from its extensions (src/ingest/overload.ts). */
function ruleOf(ext: Record<string, unknown>): string {
  if (ext['reason'] !== 'overloaded') return String(ext['reason'] ?? 'other');
  return 'lagMs' in ext ? 'lag' : 'busyPercent' in ext ? 'busy' : 'in flight';
}
const byRule = (rules: string[]) =>
  [...new Set(rules)].map((r) => `${rules.filter((x) => x === r).length} ${r}`).join(', ') || 'none';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

// 1. closed-loop throughput
let refusedInLoop = 0;
const loopRules: string[] = [];
async function throughput(seconds: number, concurrency: number): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        try {
          await propose();
          n++;
        } catch (e) {
          // A well-behaved client: refused (overload guard or budget) → wait as told, then go on.
          const err = e as { code?: string; retryAfterMs?: number; rule?: string };
          if (err.code !== 'RATE_LIMITED') throw e;
          refusedInLoop++;
          loopRules.push(err.rule ?? 'other');
          await new Promise((r) => setTimeout(r, err.retryAfterMs ?? 100));
        }
      }
    }),
  );
  return n / seconds;
}

/**
 * The floor: the same callers sending `{ __typename }` (HTTP, authentication, GraphQL and the audit entry,
 * no write). No write can go faster than this on this machine, whatever the write path does.
 */
async function floor(seconds: number, concurrency: number): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, c) => {
      for (let i = c; performance.now() < end; i += concurrency) {
        const body = (await post(i, '{"query":"{ __typename }"}')) as { data?: unknown; errors?: unknown };
        if (!body.data) throw new Error(`{ __typename } failed: ${JSON.stringify(body.errors)}`);
        n++;
      }
    }),
  );
  return n / seconds;
}

// 2. open-loop lag at a fixed rate
async function lagAt(
  rate: number,
  seconds: number,
): Promise<{
  sent: number;
  failed: number;
  refused: number;
  refusedP50: number;
  refusedP99: number;
  rules: string;
  achieved: number;
  p50: number;
  p99: number;
  /** Of the lag: send → answer, and answer → applied. */
  answered: { p50: number; p99: number };
  applied: { p50: number; p99: number };
}> {
  const pending: Array<{ partition: number; offset: bigint; sentAt: number; answeredAt: number }> = [];
  const lags: number[] = [];
  const toAnswer: number[] = [];
  const toApply: number[] = [];
  let polling = true;
  const poller = (async () => {
    while (polling || pending.length) {
      const cps = new Map(
        (await graph.checkpoints(config.kafka.topic)).map((c) => [c.partition, BigInt(c.offset)]),
      );
      const now = performance.now();
      for (let i = pending.length - 1; i >= 0; i--) {
        const p = pending[i]!;
        if ((cps.get(p.partition) ?? -1n) >= p.offset) {
          lags.push(now - p.sentAt);
          toAnswer.push(p.answeredAt - p.sentAt);
          toApply.push(now - p.answeredAt);
          pending.splice(i, 1);
        }
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const start = performance.now();
  const total = rate * seconds;
  const inflight: Promise<void>[] = [];
  let failed = 0;
  let refused = 0;
  const refusedMs: number[] = [];
  const rules: string[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inflight.push(
      propose().then(
        ({ position, sentAt }) => {
          const [p, o] = position.split(':');
          pending.push({ partition: Number(p), offset: BigInt(o!), sentAt, answeredAt: performance.now() });
        },
        (e: { code?: string; ms?: number; rule?: string }) => {
          if (e.code === 'RATE_LIMITED') {
            refused++;
            refusedMs.push(e.ms ?? NaN);
            rules.push(e.rule ?? 'other');
          } else failed++;
        },
      ),
    );
  }
  await Promise.all(inflight);
  const elapsed = (performance.now() - start) / 1000;
  polling = false;
  await poller;
  return {
    sent: total,
    failed,
    refused,
    refusedP50: pct(refusedMs, 50),
    refusedP99: pct(refusedMs, 99),
    rules: byRule(rules),
    achieved: (total - failed - refused) / elapsed,
    p50: pct(lags, 50),
    p99: pct(lags, 99),
    answered: { p50: pct(toAnswer, 50), p99: pct(toAnswer, 99) },
    applied: { p50: pct(toApply, 50), p99: pct(toApply, 99) },
  };
}

console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}`);
console.log(
  `embedder: ${config.embedder.kind} (the whole ingest pipeline runs on every propose: screen, embed, relate, admit)`,
);
// The embedder's own rate, texts/s at batch 32 (a model of its own, so nothing else shares it).
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 10);
const model = await createEmbedder(config);
const texts = Array.from({ length: 32 }, (_, i) => `Bench statement number ${i}.`);
await model.embed(texts);
let embedded = 0;
const t0 = performance.now();
while (performance.now() - t0 < SECONDS * 1000) embedded += (await model.embed(texts)).length;
const modelRate = embedded / ((performance.now() - t0) / 1000);
await model.close?.();
console.log(`embedder alone: ${Math.round(modelRate)} texts/s at batch 32`);
console.log(
  DEFAULT_BUDGETS
    ? 'write budgets: the default policy (10 writes/s per writer and namespace, burst 200; BENCH_BUDGETS=default)'
    : 'write budgets: none binding (the default policy otherwise; BENCH_BUDGETS=default to keep its budgets)',
);
// The embedder's loop kept this event loop busy: let the client see the sockets a child server closed
// meanwhile (idle keep-alive), or its first requests reuse them and fail with "other side closed".
await new Promise((r) => setTimeout(r, 100));
await throughput(3, 16); // warm-up
const CALLERS = Number(process.env['BENCH_CALLERS'] ?? 64);
const serverPids = Object.fromEntries(
  servers.flatMap((sv, j) =>
    sv.child.pid ? [[servers.length > 1 ? `server ${j + 1}` : 'server', sv.child.pid]] : [],
  ),
);
const FLOOR_SECONDS = Math.max(3, SECONDS / 3);
const floorRun = cpuShare(new URL('../../', import.meta.url).pathname, serverPids);
const floorRate = await floor(FLOOR_SECONDS, CALLERS);
const floorCpu = floorRun({ count: Math.round(floorRate * FLOOR_SECONDS), what: 'request' });
// Every statement of the measured loop (the API's and the in-process projector's), by op: where the graph's time goes.
const byOp = new Map<string, { n: number; ms: number }>();
if (m)
  m.store.db.observer = (r) => {
    const o = byOp.get(r.op) ?? { n: 0, ms: 0 };
    o.n++;
    o.ms += r.ms;
    byOp.set(r.op, o);
  };
const written0 = seq;
const cpu = cpuShare(new URL('../../', import.meta.url).pathname, serverPids);
const loopStages0 = await scrapeStages(metricsUrls);
const tput = await throughput(SECONDS, CALLERS);
const loopStages = stageMeans(loopStages0, await scrapeStages(metricsUrls));
const writes = Math.max(1, seq - written0);
const cpuUsed = cpu({ count: Math.round(tput * SECONDS), what: 'admitted write' });
if (m) m.store.db.observer = undefined;
console.log(`statements during the loop (wall ms as the caller saw them; top 12 by total):`);
for (const [op, o] of [...byOp].sort((a, b) => b[1].ms - a[1].ms).slice(0, 12))
  console.log(
    `  ${op.padEnd(28)} ${(o.n / writes).toFixed(2).padStart(6)} per propose sent  ${(o.ms / o.n).toFixed(1).padStart(7)} ms each  ${(o.ms / 1000).toFixed(1).padStart(6)} s total`,
  );
console.log(
  `propose (await=false) through GraphQL, ${CALLERS} concurrent callers, closed loop: ${Math.round(tput)} writes/s ` +
    `= ${Math.round((100 * tput) / modelRate)} % of the embedder's rate (${refusedInLoop} refusals waited out: ${byRule(loopRules)})`,
);
console.log(`  during the loop, ${cpuUsed}`);
console.log(`  the server's stages of its writes, mean ms: ${loopStages}`);
console.log(
  `the floor, { __typename } from the same ${CALLERS} callers, closed loop: ${Math.round(floorRate)} requests/s ` +
    `(no write can go faster here); ${floorCpu}`,
);
// Lag at half the sustained rate, then overload at twice it (or the rates given).
const rates = process.env['BENCH_RATES']
  ? process.env['BENCH_RATES']
      .split(',')
      .map(Number)
      .filter((r) => r > 0)
  : [Math.max(1, Math.round(tput / 2)), Math.max(2, Math.round(tput * 2))];
/**
 * Waits until the projection has applied everything appended so far (at most 60 s), so that an open-loop
 * phase measures its own rate from a projection that is not still working off the phase before (the
 * closed loop ends with a backlog). Returns how long that took.
 */
async function drain(): Promise<number> {
  const t0 = performance.now();
  const target = await (m ? m.ledger : adapters!.ledger).offsets();
  while (performance.now() - t0 < 60_000) {
    const cps = new Map(
      (await graph.checkpoints(config.kafka.topic)).map((c) => [c.partition, BigInt(c.offset)]),
    );
    // A checkpoint is the last offset applied; the high watermark the next one to be appended.
    const behind = target.filter(
      (t) => BigInt(t.highWatermark) > 0n && (cps.get(t.partition) ?? -1n) < BigInt(t.highWatermark) - 1n,
    );
    if (behind.length === 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return performance.now() - t0;
}

console.log(`  outcomes of the warm-up's and the loop's writes: ${await outcomes()}`);

/** This run's receipts by outcome, once the projection has caught up: what the loop measured. */
async function outcomes(): Promise<string> {
  await drain();
  const res = await graph.db.read(
    'bench.outcomes',
    `UNWIND $tenants AS t MATCH (r:Receipt {tenant: t}) WHERE r.idempotencyKey CONTAINS $run
     RETURN r.outcome AS outcome, count(*) AS n ORDER BY n DESC`,
    { tenants, run: `b-${suffix}-` },
  );
  return res.records.map((r) => `${String(r.get('n'))} ${String(r.get('outcome'))}`).join(', ');
}

for (const rate of rates) {
  console.log(`  (the projection caught up in ${(await drain()).toFixed(0)} ms before this phase)`);
  const before = await scrapeStages(metricsUrls);
  const r = await lagAt(rate, SECONDS);
  const stages = stageMeans(before, await scrapeStages(metricsUrls));
  console.log(
    `at ${rate} writes/s offered: ${Math.round(r.achieved)} writes/s admitted, ${r.refused} refused (RATE_LIMITED: ${r.rules}; ` +
      `answered in p50 ${r.refusedP50.toFixed(1)} ms, p99 ${r.refusedP99.toFixed(1)} ms), ${r.failed} failed otherwise; ` +
      `projection lag of admitted writes (from send) p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms ` +
      `(send → answer p50 ${r.answered.p50.toFixed(1)} / p99 ${r.answered.p99.toFixed(1)} ms, ` +
      `answer → applied p50 ${r.applied.p50.toFixed(1)} / p99 ${r.applied.p99.toFixed(1)} ms)`,
  );
  console.log(`  the server's stages of those writes, mean ms: ${stages}`);
}
await m?.stop();
for (const child of [...servers, projector]) {
  if (!child) continue;
  child.child.kill('SIGTERM');
  await child.exited;
}
await adapters?.ledger.close();
await adapters?.store.close();

// 3. rebuild over 100k events (appended directly through the ledger port, then replayed; rebuild-phase.ts)
await benchRebuild(config, Number(process.env['BENCH_REBUILD_EVENTS'] ?? 100_000), tenants);
process.exit(0);
