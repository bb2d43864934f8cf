// The sustained-load run of issue #15, as one function: `npm run bench:soak` (test/bench/soak.bench.ts)
// runs it for 10 minutes and test/int/soak.test.ts for under a minute. It starts `muninn serve` (API and
// projector in one process, as `npm start` does) as a child process — so its RSS is Muninn's alone —
// drives the mixed load of soak-load.ts at it, samples its RSS, then lets the projection catch up and
// compares what the ledger holds for the soak's tenant with what the projection applied.
import { randomUUID } from 'node:crypto';
import { benchConfig } from './support.ts';
import { newTally, runLoad, subscribeLag, type LoadTally } from './soak-load.ts';
import { connectInspector, type LiveHeapSample } from './soak-inspect.ts';
import {
  readRssKiB,
  summarizeLiveHeap,
  summarizeRss,
  type RssSample,
  type SoakReport,
} from './soak-report.ts';
import { caughtUp } from '../support/harness.ts';
import { freePort, spawnServe, waitReady, type ServeProcess } from '../support/processes.ts';
import { signDevToken } from '../../src/adapters/auth/dev-keys.ts';
import { connectAdapters } from '../../src/compose.ts';
import { silentLogger } from '../../src/ports/logger.ts';
import type { Config } from '../../src/config/index.ts';

export interface SoakOptions {
  /** How long the load runs, s (the warm-up included). */
  readonly seconds: number;
  /** The first seconds of the load, after which RSS counts as "start". */
  readonly warmupSeconds: number;
  readonly callers: number;
  /** Mean pause between one caller's calls, ms. */
  readonly thinkMs: number;
  /** RSS sampling interval, ms. */
  readonly sampleMs: number;
  /** Interval between live-heap samples (each a full collection in the child), ms. */
  readonly liveHeapMs: number;
  /** Settings for both this process and the Muninn child: servers, MUNINN_EMBEDDER, MUNINN_KEY_DIR … */
  readonly env?: Readonly<Record<string, string>>;
  /** Progress lines (the benchmark prints them; the test keeps quiet). */
  readonly log?: (line: string) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const log = o.log ?? (() => undefined);
  const config = await benchConfig('soak', { ...o.env });
  const tenant = `soak-${randomUUID().slice(0, 8)}`;
  const port = await freePort();
  const inspectPort = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const serverErrors: string[] = [];
  const proc = spawnServe('all', {
    ...childEnv(config, port, o.env),
    NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --inspect=127.0.0.1:${inspectPort}`.trim(),
  });
  collectErrors(proc, serverErrors);
  const a = connectAdapters(config, silentLogger);
  try {
    log(`starting muninn serve (pid ${proc.child.pid}) on ${url}, topic ${config.kafka.topic}`);
    await waitReady(url, 180_000);
    const inspector = await connectInspector('127.0.0.1', inspectPort);
    const endpoint = `${url}/graphql`;
    const tokens = await Promise.all(
      Array.from({ length: o.callers + 1 }, (_, i) =>
        signDevToken({
          stateDir: config.stateDir,
          issuer: config.auth.issuer,
          audience: config.auth.audience,
          tenant,
          sub: `soak-${i}`,
          scopes: ['read', 'write'],
          ttlSeconds: Math.min(config.auth.maxTokenTtlS, o.seconds + 3600),
        }),
      ),
    );
    const tally = newTally();
    const samples: RssSample[] = [];
    const heap: LiveHeapSample[] = [];
    const t0 = performance.now();
    const sample = () => {
      const kib = readRssKiB(proc.child.pid!);
      if (kib !== undefined) samples.push({ t: (performance.now() - t0) / 1000, kib });
    };
    const sampleHeap = () =>
      inspector.liveHeap((performance.now() - t0) / 1000).then(
        (h) => void heap.push(h),
        (e: unknown) => log(`live heap sample failed: ${String(e)}`),
      );
    sample();
    await sampleHeap();
    const sampler = setInterval(sample, o.sampleMs);
    const heapSampler = setInterval(() => void sampleHeap(), o.liveHeapMs);
    const progress = setInterval(() => log(progressLine(tally, samples, heap, t0)), 30_000);
    const unsubscribe = subscribeLag(endpoint, tokens[o.callers]!, tally);
    try {
      await runLoad(
        {
          url: endpoint,
          tokens: tokens.slice(0, o.callers),
          root: 'soak',
          until: t0 + o.seconds * 1000,
          thinkMs: o.thinkMs,
        },
        tally,
      );
    } finally {
      clearInterval(sampler);
      clearInterval(heapSampler);
      clearInterval(progress);
      sample();
      await sampleHeap();
      inspector.close();
      await unsubscribe();
    }
    log(`load done after ${((performance.now() - t0) / 1000).toFixed(0)} s; waiting for the projection`);
    const drainStart = performance.now();
    const drained = await drain(a, config.kafka.topic, 300_000);
    const drainSeconds = (performance.now() - drainStart) / 1000;
    const counts = await compare(a, tenant, config.kafka.batchMax);
    const stopStart = performance.now();
    const exitCode = await stop(proc);
    log(
      `muninn stopped ${((performance.now() - stopStart) / 1000).toFixed(1)} s after SIGTERM (exit code ${exitCode})`,
    );
    return {
      seconds: o.seconds,
      warmupSeconds: o.warmupSeconds,
      callers: o.callers,
      embedder: config.embedder.kind,
      tenant,
      tally,
      ledger: { events: counts.events, keys: counts.keys },
      projection: { receipts: counts.receipts, caughtUp: drained, drainSeconds },
      unprojected: counts.unprojected,
      rss: summarizeRss(samples, o.warmupSeconds, o.seconds),
      liveHeap: summarizeLiveHeap(heap, o.warmupSeconds),
      serverErrors,
      exitCode,
    };
  } finally {
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
    await a.ledger.close();
    await a.store.close();
  }
}

/** The child's settings: this config's servers, topic, group, state dir (dev keys) and key store. */
function childEnv(config: Config, port: number, extra: Readonly<Record<string, string>> = {}) {
  return {
    ...extra,
    NEO4J_URI: config.neo4j.uri,
    KAFKA_BROKERS: config.kafka.brokers.join(','),
    MUNINN_STATE_DIR: config.stateDir,
    MUNINN_KEY_DIR: config.erasure.keyDir,
    MUNINN_LEDGER_TOPIC: config.kafka.topic,
    MUNINN_DLQ_TOPIC: config.kafka.dlqTopic,
    MUNINN_PROJECTOR_GROUP: config.kafka.groupId,
    MUNINN_EMBEDDER: config.embedder.kind,
    MUNINN_PORT: String(port),
    MUNINN_HOST: '127.0.0.1',
    MUNINN_LOG_LEVEL: 'warn',
    // As deployed: libraries that behave differently under NODE_ENV=test (vitest sets it) must not.
    NODE_ENV: 'production',
  };
}

/** Keeps the error lines (pino level ≥ 50) of the child's JSON log. */
function collectErrors(proc: ServeProcess, into: string[]): void {
  let rest = '';
  proc.child.stderr?.on('data', (b: Buffer) => {
    const lines = (rest + b.toString()).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      const level = Number(/"level":(\d+)/.exec(line)?.[1] ?? 0);
      if (level >= 50) into.push(line);
    }
  });
}

function progressLine(
  tally: LoadTally,
  samples: readonly RssSample[],
  heap: readonly LiveHeapSample[],
  t0: number,
): string {
  const ok = Object.values(tally.ops).reduce((s, x) => s + x.ok, 0);
  const retry = Object.values(tally.ops).reduce((s, x) => s + x.retryable, 0);
  const bad = Object.values(tally.ops).reduce((s, x) => s + x.unexpected, 0) + tally.subscriptionErrors;
  const rss = samples[samples.length - 1];
  const h = heap[heap.length - 1];
  return (
    `  ${((performance.now() - t0) / 1000).toFixed(0)} s: ${ok} ok, ${retry} retryable, ${bad} unexpected; ` +
    `RSS ${rss ? (rss.kib / 1024).toFixed(1) : '–'} MiB, live heap ${h ? (h.usedMiB + h.backingMiB).toFixed(1) : '–'} MiB ` +
    `(at ${h ? h.t.toFixed(0) : '–'} s)`
  );
}

type Adapters = ReturnType<typeof connectAdapters>;

async function drain(a: Adapters, topic: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await caughtUp(a.ledger, a.store, topic))) {
    if (Date.now() > deadline) return false;
    await sleep(500);
  }
  return true;
}

/**
 * The ledger's events for the tenant (message key = tenant; the envelope, idempotency key included, is in
 * clear on the wire) against the projection's receipts for it: every applied command leaves one receipt
 * under its idempotency key (an entity an event created has a key of its own).
 */
async function compare(a: Adapters, tenant: string, batchMax: number) {
  const keys = new Set<string>();
  let events = 0;
  await a.ledger.readAll(async (batch) => {
    for (const m of batch.messages) {
      if (m.key !== tenant || !m.value) continue;
      events++;
      keys.add(
        String(
          (JSON.parse(Buffer.from(m.value).toString('utf8')) as { idempotencyKey?: unknown }).idempotencyKey,
        ),
      );
    }
    await Promise.resolve();
  }, batchMax);
  const res = await a.store.db.read(
    'soak.receipts',
    'MATCH (r:Receipt {tenant: $tenant}) RETURN r.idempotencyKey AS k',
    { tenant },
  );
  const receipts = new Set(res.records.map((r) => String(r.get('k'))));
  const unprojected = [...keys].filter((k) => !receipts.has(k)).length;
  return { events, keys: keys.size, receipts: receipts.size, unprojected };
}

/**
 * SIGTERM, as an orchestrator stops it; SIGKILL only after Muninn's own 30 s drain limit (main.ts) has
 * passed. Returns the exit code (null: killed).
 */
async function stop(proc: ServeProcess): Promise<number | null> {
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 45_000);
  const code = await proc.exited;
  clearTimeout(timer);
  return code;
}
