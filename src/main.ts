import { randomBytes, randomUUID } from 'node:crypto';
import type { Principal, Scope } from './domain/principal.ts';
import type { TokenVerifier } from './ports/token-verifier.ts';
import { devTokenExchange } from './adapters/auth/dev-token-exchange.ts';
import { receiptKey } from './domain/commands.ts';
import type { EvaluatePorts } from './eval/evaluate.ts';
import { load, type Config } from './config/index.ts';
import { createLogger } from './adapters/logger.ts';
import { nodeTextFiles } from './adapters/files/text-files.ts';
import { CypherExecutor } from './adapters/neo4j/executor.ts';
import { Neo4jGraphStore } from './adapters/neo4j/graph-store.ts';
import { KafkaLedger } from './adapters/kafka/kafka-ledger.ts';
import { FileKeyStore } from './adapters/keys/file-key-store.ts';
import { openEvent, sealEvents } from './lifecycle/sealing.ts';
import type { KeyStore } from './ports/key-store.ts';
import type { DecodeResult } from './domain/events.ts';
import { ErasureService } from './lifecycle/erasure.ts';
import { HoldService } from './lifecycle/holds.ts';
import { createJoseVerifier } from './adapters/auth/jose-verifier.ts';
import { ensureDevFingerprintKey, ensureDevKeys, ensureDevSecret } from './adapters/auth/dev-keys.ts';
import { FileAuditLog } from './adapters/audit/file-audit-log.ts';
import { OtelAuditLog, otelTracing, startOtlp, teeAudit } from './adapters/tracing/otel.ts';
import { startApi, type FormRoute, type RunningApi } from './api/server.ts';
import { Projector } from './projector/projector.ts';
import { readFile } from 'node:fs/promises';
import { ProjectionWaiter } from './adapters/projection-waiter.ts';
import { processLoopBusy } from './adapters/loop-busy.ts';
import { createOnnxEmbedder } from './adapters/embedders/onnx-embedder.ts';
import { createOpenAIEmbedder } from './adapters/embedders/openai.ts';
import { createHashingEmbedder } from './adapters/embedders/hashing.ts';
import { BatchingEmbedder } from './adapters/embedders/batching.ts';
import { createChatExtractor } from './adapters/extractors/openai-chat.ts';
import { RecordsService } from './records/service.ts';
import { AnalyticsService } from './records/analytics.ts';
import { StewardshipService } from './records/stewardship.ts';
import { checkEmbeddingModels } from './model-check.ts';
import { Neo4jStewardReads } from './adapters/neo4j/steward.ts';
import { Neo4jAnalytics, reviewQueueDepth } from './adapters/neo4j/analytics.ts';
import { PrometheusTelemetry, serveMetrics, type RunningMetrics } from './adapters/metrics/prometheus.ts';
import { measuredEmbedder, noTelemetry, type Telemetry } from './ports/telemetry.ts';
import { referencePolicy } from './domain/reference-policy.ts';
import { AdmissionPolicy, defaultAdmissionPolicy } from './domain/admission.ts';
import { WriteService } from './ingest/write-service.ts';
import { OverloadGuard } from './ingest/overload.ts';
import { RecallService } from './recall/service.ts';
import { WriteBudget } from './ingest/budget.ts';
import { defaultExtractor } from './ingest/extract-default.ts';
import type { Embedder } from './ports/embedder.ts';
import type { Extractor } from './ports/extractor.ts';
import { projectionStatus } from './records/projection-status.ts';
import { systemClock, type Clock } from './ports/clock.ts';
import { lifecycleDeps, loadRetentionRules, stewardScheduler } from './lifecycle-deps.ts';
import type { StewardScheduler } from './lifecycle/steward.ts';
import { RetentionScheduler } from './lifecycle/retention.ts';
import type { Logger } from './ports/logger.ts';

/**
 * The composition root: config → adapters → projector and API. The only module that wires adapters.
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

export function connectAdapters(
  config: Config,
  logger: Logger,
): {
  store: Neo4jGraphStore;
  ledger: KafkaLedger;
  keys: KeyStore;
  decode: (bytes: Uint8Array) => Promise<DecodeResult>;
} {
  const store = new Neo4jGraphStore(
    CypherExecutor.connect(
      config.neo4j.uri,
      config.neo4j.user,
      config.neo4j.password,
      config.neo4j.database,
      config.neo4j.trustedCaFile,
    ),
    { vectorsHeld: config.neo4j.vectorsHeld },
  );
  // Every append seals personal payloads under their item's data key; every read opens them (or, the
  // key destroyed, sees only the markers the tombstone leaves).
  const keys = new FileKeyStore(config.erasure.keyDir);
  const ledger = new KafkaLedger({
    brokers: config.kafka.brokers,
    clientId: config.kafka.clientId,
    topic: config.kafka.topic,
    dlqTopic: config.kafka.dlqTopic,
    partitions: config.kafka.partitions,
    logger,
    tls: config.kafka.tls,
    sasl: config.kafka.sasl,
    encode: (events) => sealEvents(events, keys),
  });
  return { store, ledger, keys, decode: (bytes) => openEvent(bytes, keys) };
}

/** The one token verifier (jose against the configured JWKS), for one audience. */
export function tokenVerifier(config: Config, audience: string, requireScope?: Scope): TokenVerifier {
  return createJoseVerifier({
    jwks: config.auth.jwks,
    issuer: config.auth.issuer,
    audience,
    algorithms: config.auth.algorithms,
    clockSkewS: config.auth.clockSkewS,
    tenantClaim: config.auth.tenantClaim,
    maxTokenTtlS: config.auth.maxTokenTtlS,
    ...(requireScope ? { requireScope } : {}),
  });
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

export async function createEmbedder(config: Config): Promise<Embedder & { close?: () => Promise<void> }> {
  const e = config.embedder;
  if (e.kind === 'openai') {
    return createOpenAIEmbedder({
      baseUrl: e.url,
      model: e.model,
      dimensions: 384,
      ...(e.apiKey ? { apiKey: e.apiKey } : {}),
    });
  }
  if (e.kind === 'hashing') return createHashingEmbedder(384);
  return createOnnxEmbedder(e.modelDir);
}

/**
 * The embedder of the issue #10 baseline (BM25 + all-MiniLM-L6-v2 per turn): MiniLM whichever local model
 * Muninn itself runs, so the comparison keeps its fixed reference; a remote or hashing embedder as configured.
 */
export function createBaselineEmbedder(config: Config): ReturnType<typeof createEmbedder> {
  if (config.embedder.kind !== 'local') return createEmbedder(config);
  return createOnnxEmbedder('.stack/models/all-MiniLM-L6-v2');
}

export function createExtractor(config: Config, logger: Logger): Extractor {
  const x = config.extractor;
  if (x.kind === 'default') return defaultExtractor;
  return createChatExtractor({
    baseUrl: x.url,
    model: x.model,
    logger,
    ...(x.escalationModel ? { escalationModel: x.escalationModel } : {}),
    ...(x.apiKey ? { apiKey: x.apiKey } : {}),
  });
}

export async function loadAdmissionPolicy(file: string | undefined): Promise<AdmissionPolicy> {
  if (!file) return defaultAdmissionPolicy;
  const parsed = AdmissionPolicy.safeParse(JSON.parse(await readFile(file, 'utf8')));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid admission policy ${file}: ${problems}`);
  }
  return parsed.data;
}

/** The read, write and recall services over the adapters (the API and `muninn eval` share them). */
export async function buildServices(
  config: Config,
  store: Neo4jGraphStore,
  ledger: KafkaLedger,
  waiter: ProjectionWaiter,
  logger: Logger,
  telemetry: Telemetry = noTelemetry,
) {
  const admission = await loadAdmissionPolicy(config.policyFile);
  // One model call per batch of concurrent requests (adapters/embedders/batching.ts). Recall embeds its
  // query alone when the model's vectors move with their batch-mates: the same question must rank the same
  // records whoever else is asking. Writes keep the batch: their vectors are recorded in their events.
  const measured = measuredEmbedder(await createEmbedder(config), telemetry);
  const embedder = new BatchingEmbedder(measured);
  const queryEmbedder = measured.batchInvariant === false ? measured : embedder;
  // In the background: a label scan must not hold up the start, and a failure only loses the warning.
  checkEmbeddingModels(store.admin, embedder.modelId, logger).catch(() => undefined);
  const policy = referencePolicy(store.lookups, config.access);
  const handleKey = config.handleKey ?? randomBytes(32).toString('hex');
  // Production refuses to start without MUNINN_FINGERPRINT_KEY (config); elsewhere a persisted dev key.
  const fingerprintKey = config.fingerprintKey ?? (await ensureDevFingerprintKey(config.stateDir));
  const records = new RecordsService(store.reads, policy);
  const writes = new WriteService({
    ledger,
    store: store.lookups,
    policy,
    admission,
    budget: new WriteBudget(
      systemClock,
      admission.budgets.perWriterPerNamespace,
      admission.budgets.perNamespace,
    ),
    embedder,
    handleKey,
    approvers: config.review.approvers,
    fingerprintKey,
    extractor: createExtractor(config, logger),
    clock: systemClock,
    ids: { uuid: randomUUID },
    projection: waiter,
    logger,
    maxTextChars: config.http.limits.maxTextChars,
    awaitTimeoutMs: config.http.awaitTimeoutMs,
    // The loop's sampler runs only when its rule can refuse (maxBusy 1 turns the rule off).
    overload: new OverloadGuard(
      config.http.overload,
      () => waiter.lagMs(),
      config.http.overload.maxBusy < 1 ? processLoopBusy().utilisation : undefined,
    ),
  });
  const recall = new RecallService({
    store: store.arms,
    policy,
    embedder: queryEmbedder,
    clock: systemClock,
    ids: { uuid: randomUUID },
    logger,
    telemetry,
    handleKey,
  });
  return { policy, records, writes, recall, handleKey, embedder };
}

/** The audit trail's MAC key: MUNINN_AUDIT_KEY, or (outside production) a dev key kept in the state dir. */
export async function auditKey(config: Config): Promise<string> {
  return config.audit.key ?? ensureDevSecret(config.stateDir, 'audit.key', 'audit key');
}

/** `muninn eval`'s ports over the real services: seeding through propose, recall through RecallService. */
export function evalPorts(
  store: Neo4jGraphStore,
  built: { readonly writes: WriteService; readonly recall: RecallService },
  principal: Principal,
): EvaluatePorts {
  return {
    database: store.admin,
    clock: systemClock,
    files: nodeTextFiles,
    async propose(r) {
      const receipt = await built.writes.propose(principal, r.input, true);
      if (!receipt.recordId || ['REJECTED', 'CONFLICT', 'PENDING'].includes(receipt.outcome))
        throw new Error(`seeding ${r.fixtureId}: ${receipt.outcome} ${receipt.reason ?? ''}`);
    },
    async recordOf(key) {
      return (
        (await store.lookups.receipt(principal.tenant, receiptKey(principal, key)))?.recordId ?? undefined
      );
    },
    async recall(q) {
      const r = await built.recall.recall(principal, {
        query: q.query,
        purpose: q.purpose,
        namespace: q.namespace,
        recipe: q.recipe,
        limit: Math.min(100, q.k),
        tokenBudget: 100_000,
      });
      return r.pack.items.map((i) => i.id);
    },
  };
}

export async function startMuninn(
  config: Config,
  logger: Logger = createLogger(config.log.level),
  opts: { readonly retentionClock?: Clock; readonly stewardClock?: Clock } = {},
): Promise<Muninn> {
  const rules = await loadRetentionRules(config.retention.rulesFile);
  const { store, ledger, keys, decode } = connectAdapters(config, logger);
  try {
    await store.admin.migrate();
    await ledger.ensureTopics();
  } catch (e) {
    await Promise.allSettled([store.admin.close(), ledger.close()]);
    throw e;
  }
  const waiter = new ProjectionWaiter(store.projector, config.kafka.topic);
  const otlp = config.otlpEndpoint ? startOtlp(config.otlpEndpoint) : undefined;
  let projector: Projector | undefined;
  // A process without a projector (role api) cannot see one: the partitions' lag is what it shows.
  const projectionHealth = () => projector?.projectionHealth() ?? { healthy: true, stalled: [] };
  const projection = () => projectionStatus(ledger, store.projector, config.kafka.topic, projectionHealth);
  const prometheus = config.metrics
    ? new PrometheusTelemetry({
        stalled: () => projector?.stalled() ?? [],
        lag: async () => (await projection()).partitions,
        reviewQueueDepth: () => reviewQueueDepth(store.db),
      })
    : undefined;
  const telemetry = prometheus ?? noTelemetry;
  // A projector-only process has no API listener: its probes use the metrics port's /healthz and /readyz.
  const projectorHealth = () => projector?.health() ?? { ready: false, checks: { projector: 'not started' } };
  const metrics = prometheus
    ? await serveMetrics(
        prometheus,
        config.metrics!.host,
        config.metrics!.port,
        logger,
        config.role === 'projector' ? projectorHealth : undefined,
      )
    : undefined;
  const erasureDeps = await lifecycleDeps(config, {
    store,
    ledger,
    keys,
    waiter,
    logger,
    verifier: tokenVerifier(config, config.auth.audience),
  });

  if (config.role !== 'api') {
    projector = new Projector({
      ledger,
      store: store.projector,
      topic: config.kafka.topic,
      groupId: config.kafka.groupId,
      sessionTimeoutMs: config.kafka.sessionTimeoutMs,
      batchMax: config.kafka.batchMax,
      logger,
      decode,
      onApplied: (p, o) => waiter.notify(p, o),
      telemetry,
      tracing: otelTracing,
      stallAfterMs: config.kafka.stallAfterMs,
    });
    await projector.start();
  }
  // Retention runs beside the projector, when rules are configured.
  const retention =
    projector && rules
      ? new RetentionScheduler({
          ...erasureDeps,
          rules,
          erasure: new ErasureService(erasureDeps),
          ageClock: opts.retentionClock ?? systemClock,
          intervalMs: config.retention.intervalMs,
        })
      : undefined;
  retention?.start();
  const steward = projector
    ? stewardScheduler(config, { store, ledger, waiter, logger }, opts.stewardClock)
    : undefined;
  steward?.start();

  let api: RunningApi | undefined;
  let services: Muninn['services'];
  let embedder: (Embedder & { close?: () => Promise<void> }) | undefined;
  let audit: FileAuditLog | undefined;
  if (config.role !== 'projector') {
    if (config.env !== 'production' && config.auth.jwks.kind === 'file') await ensureDevKeys(config.stateDir);
    const verifier = tokenVerifier(config, config.auth.audience);
    audit = await FileAuditLog.open(config.audit.dir, await auditKey(config));
    const built = await buildServices(config, store, ledger, waiter, logger, telemetry);
    embedder = built.embedder;
    const { records, writes } = built;
    services = { writes, recall: built.recall };
    const erasure = new ErasureService(erasureDeps);
    const holds = new HoldService(erasureDeps);
    api = await startApi({
      host: config.http.host,
      port: config.http.port,
      introspection: config.http.introspection,
      console: config.http.console,
      limits: config.http.limits,
      verifier,
      clockSkewS: config.auth.clockSkewS,
      logger,
      corsOrigins: config.corsOrigins,
      formRoutes: devTokenRoute(config),
      telemetry,
      tracing: otelTracing,
      audit: teeAudit(audit, new OtelAuditLog()),
      services: {
        records,
        writes,
        recall: built.recall,
        erasure,
        holds,
        projection,
        analytics: new AnalyticsService(store.reads, new Neo4jAnalytics(store.db), built.policy),
        stewardship: new StewardshipService(
          new Neo4jStewardReads(store.db),
          store.reads,
          built.policy,
          systemClock,
        ),
      },
      readiness: async () => {
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
      },
    });
  }

  let stopping: Promise<void> | undefined;
  return {
    config,
    api,
    audit,
    metrics,
    projector,
    store,
    ledger,
    decode,
    keys,
    services,
    retention,
    steward,
    stop: () =>
      (stopping ??= (async () => {
        await api?.stop();
        await audit?.close();
        await metrics?.stop();
        await retention?.stop();
        await steward?.stop();
        waiter.close();
        await projector?.stop();
        await ledger.close();
        await store.admin.close();
        await embedder?.close?.();
        await otlp?.shutdown();
      })()),
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
