import { randomBytes, randomUUID } from 'node:crypto';
import type { Principal, Scope } from './domain/principal.ts';
import type { TokenVerifier } from './ports/token-verifier.ts';
import { receiptKey } from './domain/commands.ts';
import type { EvaluatePorts } from './eval/evaluate.ts';
import type { Config } from './config/index.ts';
import { nodeTextFiles } from './adapters/files/text-files.ts';
import { CypherExecutor } from './adapters/neo4j/executor.ts';
import { Neo4jGraphStore } from './adapters/neo4j/graph-store.ts';
import { KafkaLedger } from './adapters/kafka/kafka-ledger.ts';
import { FileKeyStore } from './adapters/keys/file-key-store.ts';
import { openEvent, sealEvents } from './lifecycle/sealing.ts';
import type { KeyStore } from './ports/key-store.ts';
import type { DecodeResult } from './domain/event-wire.ts';
import { createJoseVerifier } from './adapters/auth/jose-verifier.ts';
import { ensureDevFingerprintKey, ensureDevSecret } from './adapters/auth/dev-keys.ts';
import { loadJsonFile } from './config/json-file.ts';
import type { ProjectionWaiter } from './adapters/projection-waiter.ts';
import { processLoopBusy } from './adapters/loop-busy.ts';
import { createOnnxEmbedder } from './adapters/embedders/onnx-embedder.ts';
import { createOpenAIEmbedder } from './adapters/embedders/openai.ts';
import { createHashingEmbedder } from './adapters/embedders/hashing.ts';
import { BatchingEmbedder } from './adapters/embedders/batching.ts';
import { createChatExtractor } from './adapters/extractors/openai-chat.ts';
import { RecordsService } from './records/service.ts';
import { checkEmbeddingModels } from './model-check.ts';
import { measuredEmbedder, measuredTurns, noTelemetry, type Telemetry } from './ports/telemetry.ts';
import { referencePolicy } from './domain/reference-policy.ts';
import { AdmissionPolicy, defaultAdmissionPolicy } from './domain/admission.ts';
import { WriteService } from './ingest/write-service.ts';
import { OverloadGuard } from './ingest/overload.ts';
import { SubjectGate } from './ingest/subject-gate.ts';
import { RecallService } from './recall/service.ts';
import { WriteBudget } from './ingest/budget.ts';
import { defaultExtractor } from './ingest/extract-default.ts';
import type { Embedder } from './ports/embedder.ts';
import type { Extractor } from './ports/extractor.ts';
import { systemClock } from './ports/clock.ts';
import type { Logger } from './ports/logger.ts';

/**
 * The composition root's factories: adapters from config (Neo4j, Kafka, keys), the token verifier, the
 * embedder and extractor, and the read, write and recall services over them. `main.ts` starts a process
 * from these; the CLI (`muninn eval`, the handoff process, the MCP bridge) and the benchmarks build what
 * they need from the same ones, so every entry point wires the same way.
 */
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
    { vectorsHeld: config.neo4j.vectorsHeld, entitiesHeld: config.neo4j.entitiesHeld },
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
  return file ? loadJsonFile(AdmissionPolicy, file, 'admission policy') : defaultAdmissionPolicy;
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
    subjects: subjectGate(config, store, waiter, telemetry),
    telemetry,
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

/** Writes about one subject take turns in this process, and across API processes when configured (graph). */
function subjectGate(
  config: Config,
  store: Neo4jGraphStore,
  waiter: ProjectionWaiter,
  telemetry: Telemetry,
): SubjectGate {
  const across =
    config.http.subjectTurns === 'graph'
      ? { turns: measuredTurns(store.turns, telemetry), holdMs: config.http.awaitTimeoutMs }
      : undefined;
  return new SubjectGate(waiter, config.http.overload.maxLagMs, across);
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
