import type { Config } from './config/index.ts';
import { createLogger } from './adapters/logger.ts';
import { CypherExecutor } from './adapters/neo4j/executor.ts';
import { Neo4jGraphStore } from './adapters/neo4j/graph-store.ts';
import { neo4jHandoffStateStore, neo4jTokenReplayGuard } from './adapters/neo4j/handoff-store.ts';
import { ensureDevKeys } from './adapters/auth/dev-keys.ts';
import { FileAuditLog } from './adapters/audit/file-audit-log.ts';
import { nodeOutboxRecords } from './adapters/files/outbox-dir.ts';
import { OtelAuditLog, otelTracing, startOtlp, teeAudit } from './adapters/tracing/otel.ts';
import { PrometheusTelemetry, serveMetrics, type RunningMetrics } from './adapters/metrics/prometheus.ts';
import { buildHandoffSchema, handoffVerifier } from './api/handoff.ts';
import { startGraphqlServer, type RunningApi } from './api/server.ts';
import { outboxReader, HandoffService, type OutboxReader } from './handoff/contract.ts';
import { auditKey, tokenVerifier } from './compose.ts';
import { systemClock } from './ports/clock.ts';
import type { Logger } from './ports/logger.ts';

/**
 * `muninn handoff serve`: the Heimdall handoff contract (seed 000) as its own private process and port
 * (MUNINN_HANDOFF_HOST:MUNINN_HANDOFF_PORT, path /handoff, plus /healthz, /readyz and, with
 * MUNINN_METRICS_PORT, /metrics). The main API does not serve it. What it needs is what the contract
 * needs: Neo4j (lease and checkpoint state, the token replay guard), the outbox (read only: the reader has
 * no write operation), the JWKS and an audit directory. No Kafka, no projector, no embedder, no key store.
 */
export interface RunningHandoff {
  /** The /handoff URL. */
  readonly url: string;
  readonly port: number;
  readonly service: HandoffService;
  readonly metrics: RunningMetrics | undefined;
  stop(): Promise<void>;
}

/** The Muninn side of the handoff contract over the configured outbox, its state in Neo4j. */
function createHandoffService(
  config: Config,
  db: CypherExecutor,
  logger: Logger,
  outbox: OutboxReader = outboxReader(nodeOutboxRecords(config.handoff.outboxDir)),
): HandoffService {
  return new HandoffService({
    stream: config.handoff.stream,
    outbox,
    store: neo4jHandoffStateStore(db),
    clock: systemClock,
    log: logger,
  });
}

export async function startHandoff(
  config: Config,
  logger: Logger = createLogger(config.log.level),
): Promise<RunningHandoff> {
  const store = new Neo4jGraphStore(
    CypherExecutor.connect(config.neo4j.uri, config.neo4j.user, config.neo4j.password, config.neo4j.database),
  );
  let metrics: RunningMetrics | undefined;
  let audit: FileAuditLog | undefined;
  let server: RunningApi | undefined;
  const otlp = config.otlpEndpoint ? startOtlp(config.otlpEndpoint) : undefined;
  const stop = async () => {
    await server?.stop();
    await audit?.close();
    await metrics?.stop();
    await store.admin.close();
    await otlp?.shutdown();
  };
  try {
    // Idempotent, as in every other process: the handoff state's constraints exist before the first lease.
    await store.admin.migrate();
    if (config.env !== 'production' && config.auth.jwks.kind === 'file') await ensureDevKeys(config.stateDir);
    const outbox = outboxReader(nodeOutboxRecords(config.handoff.outboxDir));
    const service = createHandoffService(config, store.db, logger, outbox);
    const telemetry = config.metrics ? new PrometheusTelemetry() : undefined;
    metrics = telemetry
      ? await serveMetrics(telemetry, config.metrics!.host, config.metrics!.port, logger)
      : undefined;
    audit = await FileAuditLog.open(config.audit.dir, await auditKey(config));
    server = await startGraphqlServer({
      component: 'handoff',
      host: config.handoff.host,
      port: config.handoff.port,
      limits: config.http.limits,
      logger,
      endpoints: {
        // No introspection: its only caller knows the contract.
        '/handoff': {
          schema: buildHandoffSchema(service),
          verifier: handoffVerifier(
            tokenVerifier(config, config.auth.handoffAudience, 'handoff'),
            neo4jTokenReplayGuard(store.db),
            config.handoff.maxTokenTtlS,
          ),
          introspection: false,
        },
      },
      // As on the API: each operation one audit entry and, with MUNINN_OTLP_ENDPOINT, one span.
      audit: teeAudit(audit, new OtelAuditLog()),
      tracing: otelTracing,
      ...(telemetry ? { telemetry } : {}),
      readiness: () => readiness(store, outbox),
    });
    return { url: server.url, port: server.port, service, metrics, stop };
  } catch (e) {
    await stop().catch(() => undefined);
    throw e;
  }
}

/** Ready when Neo4j answers with its migrations applied and the outbox can be listed. */
async function readiness(
  store: Neo4jGraphStore,
  outbox: OutboxReader,
): Promise<{ ready: boolean; checks: Record<string, string> }> {
  const checks: Record<string, string> = {};
  let ready = true;
  try {
    await store.admin.ping();
    const migrated = await store.admin.migrationsApplied();
    checks['neo4j'] = 'ok';
    checks['migrations'] = migrated ? 'ok' : 'pending';
    ready &&= migrated;
  } catch {
    checks['neo4j'] = 'unreachable';
    ready = false;
  }
  // A directory listing only: the chain itself is verified on every contract call.
  try {
    await outbox.counts();
    checks['outbox'] = 'ok';
  } catch {
    checks['outbox'] = 'unreadable';
    ready = false;
  }
  return { ready, checks };
}

/** Run until SIGINT/SIGTERM, then stop accepting and close. */
export async function runHandoffUntilSignal(config: Config): Promise<void> {
  const logger = createLogger(config.log.level);
  const h = await startHandoff(config, logger);
  logger.info({ url: h.url }, 'handoff started');
  await new Promise<void>((resolve) => {
    const onSignal = (sig: string) => {
      logger.info({ sig }, 'stopping');
      resolve();
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  });
  const hard = setTimeout(() => process.exit(1), 30_000);
  hard.unref();
  await h.stop();
  logger.info({}, 'stopped');
}
