import { createServer, type Server } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Telemetry } from '../../ports/telemetry.ts';
import type { Logger } from '../../ports/logger.ts';

/**
 * Prometheus figures for one Muninn process, in its own registry (never the library's global one, so
 * two instances in one process — the tests — do not mix). Counters and histograms are fed as things
 * happen (Telemetry); gauges that describe shared state (projection lag, review queue depth) are read at
 * scrape time from the sources the API already uses, so a scrape costs two small queries and is never
 * stale. No label carries a tenant, a caller or text (see ports/telemetry.ts).
 */
export interface ScrapeSources {
  /** Per partition of the ledger topic: events appended but not yet projected. */
  readonly lag?: () => Promise<ReadonlyArray<{ partition: number; lag: number }>>;
  /** Proposals waiting for a reviewer, over every tenant. */
  readonly reviewQueueDepth?: () => Promise<number>;
  /** This process's projector's stalled partitions (Projector.stalled): a partition and since when. */
  readonly stalled?: () => ReadonlyArray<{ readonly partition: number; readonly since: Date }>;
}

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class PrometheusTelemetry implements Telemetry {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'muninn_graphql_requests_total',
    help: 'GraphQL operations by root field and outcome code (OK or the error code)',
    labelNames: ['operation', 'code'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'muninn_graphql_request_duration_seconds',
    help: 'GraphQL operation latency by root field',
    labelNames: ['operation'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });
  private readonly stages = new Histogram({
    name: 'muninn_recall_stage_duration_seconds',
    help: 'Recall latency per stage (embed, lexical, context, vector, graph, scope, records, fuse, pack) and recipe',
    labelNames: ['recipe', 'stage'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });
  private readonly writeStages = new Histogram({
    name: 'muninn_write_stage_duration_seconds',
    help: 'Writes that reached the ledger, per command and stage (check, turn, extract, embed, lookup, decide, append, await)',
    labelNames: ['command', 'stage'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });
  private readonly batches = new Histogram({
    name: 'muninn_embedding_batch_size',
    help: 'Texts per call to the embedder',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers: [this.registry],
  });
  private readonly embedSeconds = new Histogram({
    name: 'muninn_embedding_batch_duration_seconds',
    help: 'Time per call to the embedder',
    buckets: SECONDS,
    registers: [this.registry],
  });
  private readonly turns = new Histogram({
    name: 'muninn_subject_turn_wait_seconds',
    help: "Waits for subjects' turns across API processes, by outcome (taken, or given_up: the write was refused)",
    labelNames: ['outcome'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });
  private readonly dlq = new Counter({
    name: 'muninn_projector_dead_lettered_total',
    help: 'Events the projector set aside to the dead-letter topic since this process started',
    registers: [this.registry],
  });

  constructor(sources: ScrapeSources = {}) {
    const { lag, reviewQueueDepth, stalled } = sources;
    // The runtime's own figures (process_resident_memory_bytes, nodejs_heap_size_used_bytes,
    // nodejs_external_memory_bytes, GC pauses, event-loop lag): RSS alone cannot tell a leak from V8
    // growing its heap or the allocator keeping freed pages; heap used after collections can.
    collectDefaultMetrics({ register: this.registry });
    if (lag)
      new Gauge({
        name: 'muninn_projection_lag',
        help: 'Ledger events appended but not yet projected, per partition',
        labelNames: ['partition'] as const,
        registers: [this.registry],
        async collect() {
          this.reset();
          for (const p of await lag()) this.set({ partition: String(p.partition) }, p.lag);
        },
      });
    if (stalled)
      new Gauge({
        name: 'muninn_projection_stalled_seconds',
        help: 'How long a partition has been stuck on one failing batch in this process (no series when none is)',
        labelNames: ['partition'] as const,
        registers: [this.registry],
        collect() {
          this.reset();
          const now = Date.now();
          for (const s of stalled())
            this.set({ partition: String(s.partition) }, (now - s.since.getTime()) / 1000);
        },
      });
    if (reviewQueueDepth)
      new Gauge({
        name: 'muninn_review_queue_depth',
        help: 'Proposals waiting for a reviewer (all tenants)',
        registers: [this.registry],
        async collect() {
          this.set(await reviewQueueDepth());
        },
      });
  }

  graphql(operation: string, code: string, seconds: number): void {
    this.requests.inc({ operation, code });
    this.latency.observe({ operation }, seconds);
  }

  recall(recipe: string, stagesMs: Readonly<Record<string, number>>): void {
    for (const [stage, ms] of Object.entries(stagesMs)) this.stages.observe({ recipe, stage }, ms / 1000);
  }

  write(command: string, stagesMs: Readonly<Record<string, number>>): void {
    for (const [stage, ms] of Object.entries(stagesMs))
      this.writeStages.observe({ command, stage }, ms / 1000);
  }

  embedBatch(size: number, seconds: number): void {
    this.batches.observe(size);
    this.embedSeconds.observe(seconds);
  }

  deadLettered(count: number): void {
    this.dlq.inc(count);
  }

  subjectTurn(outcome: 'taken' | 'given_up', seconds: number): void {
    this.turns.observe({ outcome }, seconds);
  }
}

export interface RunningMetrics {
  readonly url: string;
  stop(): Promise<void>;
}

/** A process's readiness, as `/readyz` answers it (503 when not ready). */
export type Readiness = () => { readonly ready: boolean; readonly checks: Record<string, string> };

/**
 * `/metrics` on its own port (kept off the public API port: lag and queue depth span every tenant). With
 * `health`, the port also answers `/healthz` (the process is alive: answering at all) and `/readyz` (the
 * given check): the projector role has no other HTTP listener for its probes. Neither touches Neo4j or
 * Kafka, so an outage there restarts nothing.
 */
export async function serveMetrics(
  t: PrometheusTelemetry,
  host: string,
  port: number,
  logger: Logger,
  health?: Readiness,
): Promise<RunningMetrics> {
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (health && (path === '/healthz' || path === '/readyz')) {
      const r = path === '/healthz' ? { ready: true, checks: {} } : health();
      const body = JSON.stringify(path === '/healthz' ? { status: 'ok' } : r);
      res.writeHead(r.ready ? 200 : 503, { 'content-type': 'application/json; charset=utf-8' }).end(body);
      return;
    }
    if (path !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    t.registry
      .metrics()
      .then((body) => res.writeHead(200, { 'content-type': t.registry.contentType }).end(body))
      .catch((e: unknown) => {
        logger.error({ err: String(e) }, 'metrics scrape failed');
        res.writeHead(500).end();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address();
  const bound = typeof addr === 'object' && addr ? addr.port : port;
  return {
    url: `http://${host}:${bound}/metrics`,
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}
