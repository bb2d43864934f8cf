import type { Config } from './config/index.ts';
import { load } from './config/index.ts';
import { createLogger } from './adapters/logger.ts';
import { devTokenExchange } from './adapters/auth/dev-token-exchange.ts';
import { ensureDevKeys } from './adapters/auth/dev-keys.ts';
import { FileAuditLog } from './adapters/audit/file-audit-log.ts';
import { OtelAuditLog, otelTracing, startOtlp, teeAudit } from './adapters/tracing/otel.ts';
import type { Neo4jGraphStore } from './adapters/neo4j/graph-store.ts';
import type { KafkaLedger } from './adapters/kafka/kafka-ledger.ts';
import { Neo4jStewardReads } from './adapters/neo4j/steward.ts';
import { Neo4jAnalytics, reviewQueueDepth } from './adapters/neo4j/analytics.ts';
import { PrometheusTelemetry, serveMetrics, type RunningMetrics } from './adapters/metrics/prometheus.ts';
import { ProjectionWaiter } from './adapters/projection-waiter.ts';
import { startApi, type FormRoute, type RunningApi } from './api/server.ts';
import { Projector } from './projector/projector.ts';
import type { DecodeResult } from './domain/event-wire.ts';
import type { Embedder } from './ports/embedder.ts';
import type { KeyStore } from './ports/key-store.ts';
import type { Logger } from './ports/logger.ts';
import { systemClock, type Clock } from './ports/clock.ts';
import { noTelemetry, type Telemetry } from './ports/telemetry.ts';
import { ErasureService } from './lifecycle/erasure.ts';
import { HoldService } from './lifecycle/holds.ts';
import type { StewardScheduler } from './lifecycle/steward.ts';
import { RetentionScheduler } from './lifecycle/retention.ts';
import { lifecycleDeps, loadRetentionRules, stewardScheduler } from './lifecycle-deps.ts';
import { AnalyticsService } from './records/analytics.ts';
import { StewardshipService } from './records/stewardship.ts';
import { projectionStatus, type ProjectionStatus } from './records/projection-status.ts';
import type { WriteService } from './ingest/write-service.ts';
import type { RecallService } from './recall/service.ts';
import { auditKey, buildServices, connectAdapters, tokenVerifier } from './compose.ts';

/**
 * The composition root: config → adapters → projector and API, in one process or split by role. The
 * factories it starts from are in `compose.ts`; this module starts and stops what a role runs.
 */
export interface Muninn {
  readonly config: Config;
  readonly api: RunningApi | undefined;
  /** This process's audit trail file, when it serves the API. */
  readonly audit: FileAuditLog | undefined;
  /** Prometheus /metrics, when MUNINN_METRICS_PORT is set. */
  readonly metrics: RunningMetrics | undefined;
  readonly projector: Projector | undefined;
  readonly store: Neo4jGraphStore;
  readonly ledger: KafkaLedger;
  /** Opens ledger bytes (sealed payloads too, while their key exists), as the projector does. */
  readonly decode: (bytes: Uint8Array) => Promise<DecodeResult>;
  readonly keys: KeyStore;
  /** The retention scheduler, in a process that projects and has rules (MUNINN_RETENTION_RULES). */
  readonly retention: RetentionScheduler | undefined;
  /** The steward checks, in a process that projects with MUNINN_STEWARD on. */
  readonly steward: StewardScheduler | undefined;
  /** The write side, when this process serves the API. */
  readonly services: { readonly writes: WriteService; readonly recall: RecallService } | undefined;
  stop(): Promise<void>;
}

/** Outside production, with the bridge's client secret set: the development token-exchange endpoint. */
function devTokenRoute(config: Config): Record<string, FormRoute> {
  const secret = config.mcp.clientSecret;
  if (config.env === 'production' || !secret) return {};
  return {
    '/dev/token': devTokenExchange({
      stateDir: config.stateDir,
      issuer: config.auth.issuer,
      tenantClaim: config.auth.tenantClaim,
      subjectVerifier: tokenVerifier(config, config.mcp.audience),
      targetAudience: config.auth.audience,
      clientId: config.mcp.clientId,
      clientSecret: secret,
    }),
  };
}

type Adapters = ReturnType<typeof connectAdapters>;
type LifecycleDeps = Awaited<ReturnType<typeof lifecycleDeps>>;

/**
 * What every role shares once the adapters are up: the projection waiter, the projection's status, and
 * telemetry (Prometheus and its port when configured). `side.projector` is filled in when this process
 * projects; until then, and in an API-only process, health reads the partitions' lag.
 */
async function observe(config: Config, a: Adapters, logger: Logger, side: { projector?: Projector }) {
  const waiter = new ProjectionWaiter(a.store.projector, config.kafka.topic);
  const otlp = config.otlpEndpoint ? startOtlp(config.otlpEndpoint) : undefined;
  // A process without a projector (role api) cannot see one: the partitions' lag is what it shows.
  const projectionHealth = () => side.projector?.projectionHealth() ?? { healthy: true, stalled: [] };
  const projection = () =>
    projectionStatus(a.ledger, a.store.projector, config.kafka.topic, projectionHealth);
  const prometheus = config.metrics
    ? new PrometheusTelemetry({
        stalled: () => side.projector?.stalled() ?? [],
        lag: async () => (await projection()).partitions,
        reviewQueueDepth: () => reviewQueueDepth(a.store.db),
      })
    : undefined;
  // A projector-only process has no API listener: its probes use the metrics port's /healthz and /readyz.
  const projectorHealth = () =>
    side.projector?.health() ?? { ready: false, checks: { projector: 'not started' } };
  const metrics = prometheus
    ? await serveMetrics(
        prometheus,
        config.metrics!.host,
        config.metrics!.port,
        logger,
        config.role === 'projector' ? projectorHealth : undefined,
      )
    : undefined;
  return { waiter, otlp, projection, metrics, telemetry: prometheus ?? noTelemetry };
}

/** The projector, and retention and the steward beside it (when configured), started. */
async function startProjecting(
  config: Config,
  a: Adapters,
  o: { waiter: ProjectionWaiter; telemetry: Telemetry; logger: Logger; erasureDeps: LifecycleDeps },
  rules: Awaited<ReturnType<typeof loadRetentionRules>>,
  opts: { readonly retentionClock?: Clock; readonly stewardClock?: Clock },
) {
  const projector = new Projector({
    ledger: a.ledger,
    store: a.store.projector,
    topic: config.kafka.topic,
    groupId: config.kafka.groupId,
    sessionTimeoutMs: config.kafka.sessionTimeoutMs,
    batchMax: config.kafka.batchMax,
    logger: o.logger,
    decode: a.decode,
    onApplied: (p, off) => o.waiter.notify(p, off),
    telemetry: o.telemetry,
    tracing: otelTracing,
    stallAfterMs: config.kafka.stallAfterMs,
  });
  await projector.start();
  const retention = rules
    ? new RetentionScheduler({
        ...o.erasureDeps,
        rules,
        erasure: new ErasureService(o.erasureDeps),
        ageClock: opts.retentionClock ?? systemClock,
        intervalMs: config.retention.intervalMs,
      })
    : undefined;
  retention?.start();
  const steward = stewardScheduler(
    config,
    { store: a.store, ledger: a.ledger, waiter: o.waiter, logger: o.logger },
    opts.stewardClock,
  );
  steward?.start();
  return { projector, retention, steward };
}

/** The API's readiness: Neo4j reachable and migrated, and this process's projector ready when it has one. */
function readiness(store: Neo4jGraphStore, projector: Projector | undefined) {
  return async () => {
    const checks: Record<string, string> = {};
    let ready = true;
    try {
      await store.admin.ping();
      checks['neo4j'] = 'ok';
      const migrated = await store.admin.migrationsApplied();
      checks['migrations'] = migrated ? 'ok' : 'pending';
      ready &&= migrated;
    } catch {
      checks['neo4j'] = 'unreachable';
      ready = false;
    }
    if (projector) {
      const p = projector.health();
      Object.assign(checks, p.checks);
      ready &&= p.ready;
    } else checks['projector'] = 'external';
    return { ready, checks };
  };
}

/** The GraphQL API with its services and audit trail, listening. */
async function startServing(
  config: Config,
  a: Adapters,
  o: {
    waiter: ProjectionWaiter;
    telemetry: Telemetry;
    logger: Logger;
    erasureDeps: LifecycleDeps;
    projection: () => Promise<ProjectionStatus>;
    projector: Projector | undefined;
  },
) {
  if (config.env !== 'production' && config.auth.jwks.kind === 'file') await ensureDevKeys(config.stateDir);
  const audit = await FileAuditLog.open(config.audit.dir, await auditKey(config));
  const built = await buildServices(config, a.store, a.ledger, o.waiter, o.logger, o.telemetry);
  const api = await startApi({
    host: config.http.host,
    port: config.http.port,
    introspection: config.http.introspection,
    console: config.http.console,
    limits: config.http.limits,
    acceptors: config.http.acceptors,
    verifier: tokenVerifier(config, config.auth.audience),
    clockSkewS: config.auth.clockSkewS,
    logger: o.logger,
    corsOrigins: config.corsOrigins,
    formRoutes: devTokenRoute(config),
    telemetry: o.telemetry,
    tracing: otelTracing,
    audit: teeAudit(audit, new OtelAuditLog()),
    services: {
      records: built.records,
      writes: built.writes,
      recall: built.recall,
      erasure: new ErasureService(o.erasureDeps),
      holds: new HoldService(o.erasureDeps),
      projection: o.projection,
      analytics: new AnalyticsService(a.store.reads, new Neo4jAnalytics(a.store.db), built.policy),
      stewardship: new StewardshipService(
        new Neo4jStewardReads(a.store.db),
        a.store.reads,
        built.policy,
        systemClock,
      ),
    },
    readiness: readiness(a.store, o.projector),
  });
  const embedder: Embedder & { close?: () => Promise<void> } = built.embedder;
  return { api, audit, embedder, services: { writes: built.writes, recall: built.recall } };
}

/** The adapters, with Neo4j migrated and the ledger's topics made; a failure closes both. */
async function connectMigrated(config: Config, logger: Logger): Promise<Adapters> {
  const a = connectAdapters(config, logger);
  try {
    await a.store.admin.migrate();
    await a.ledger.ensureTopics();
  } catch (e) {
    await Promise.allSettled([a.store.admin.close(), a.ledger.close()]);
    throw e;
  }
  return a;
}

/** Stops in the order a drain needs: the API first, the stores and exporters last. */
async function stopAll(
  a: Adapters,
  o: Awaited<ReturnType<typeof observe>>,
  side: { projector?: Projector },
  projecting: Awaited<ReturnType<typeof startProjecting>> | undefined,
  serving: Awaited<ReturnType<typeof startServing>> | undefined,
): Promise<void> {
  await serving?.api.stop();
  await serving?.audit.close();
  await o.metrics?.stop();
  await projecting?.retention?.stop();
  await projecting?.steward?.stop();
  o.waiter.close();
  await side.projector?.stop();
  await a.ledger.close();
  await a.store.admin.close();
  await serving?.embedder.close?.();
  await o.otlp?.shutdown();
}

export async function startMuninn(
  config: Config,
  logger: Logger = createLogger(config.log.level),
  opts: { readonly retentionClock?: Clock; readonly stewardClock?: Clock } = {},
): Promise<Muninn> {
  const rules = await loadRetentionRules(config.retention.rulesFile); // a bad file stops the start first
  const a = await connectMigrated(config, logger);
  const side: { projector?: Projector } = {};
  const o = await observe(config, a, logger, side);
  const erasureDeps = await lifecycleDeps(config, {
    ...a,
    waiter: o.waiter,
    logger,
    verifier: tokenVerifier(config, config.auth.audience),
  });
  const projecting =
    config.role !== 'api'
      ? await startProjecting(config, a, { ...o, logger, erasureDeps }, rules, opts)
      : undefined;
  side.projector = projecting?.projector;
  const serving =
    config.role !== 'projector'
      ? await startServing(config, a, { ...o, logger, erasureDeps, projector: side.projector })
      : undefined;

  let stopping: Promise<void> | undefined;
  return {
    config,
    api: serving?.api,
    audit: serving?.audit,
    metrics: o.metrics,
    projector: side.projector,
    store: a.store,
    ledger: a.ledger,
    decode: a.decode,
    keys: a.keys,
    services: serving?.services,
    retention: projecting?.retention,
    steward: projecting?.steward,
    stop: () => (stopping ??= stopAll(a, o, side, projecting, serving)),
  };
}
/** Run until SIGINT/SIGTERM, then drain: stop accepting, finish the batch in flight, close. */
export async function runUntilSignal(config: Config): Promise<void> {
  const logger = createLogger(config.log.level);
  const m = await startMuninn(config, logger);
  logger.info({ role: config.role, url: m.api?.url }, 'muninn started');
  await new Promise<void>((resolve) => {
    const onSignal = (sig: string) => {
      logger.info({ sig }, 'draining');
      resolve();
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  });
  const hard = setTimeout(() => process.exit(1), 30_000);
  hard.unref();
  await m.stop();
  logger.info({}, 'stopped');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let config: Config;
  try {
    config = load();
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  }
  runUntilSignal(config).catch((e: unknown) => {
    process.stderr.write(`muninn failed to start: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
