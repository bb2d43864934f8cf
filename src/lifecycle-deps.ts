import { randomUUID } from 'node:crypto';
import { loadJsonFile } from './config/json-file.ts';
import { ensureDevFingerprintKey } from './adapters/auth/dev-keys.ts';
import type { KafkaLedger } from './adapters/kafka/kafka-ledger.ts';
import { Neo4jErasureLookups } from './adapters/neo4j/erasure-lookups.ts';
import type { Neo4jGraphStore } from './adapters/neo4j/graph-store.ts';
import type { ProjectionWaiter } from './adapters/projection-waiter.ts';
import type { Config } from './config/index.ts';
import { RetentionRules, type RetentionRule } from './domain/retention.ts';
import { screenCommand } from './ingest/screen-command.ts';
import type { ErasureDeps } from './lifecycle/erasure.ts';
import { Neo4jStewardLookups } from './adapters/neo4j/steward.ts';
import { StewardScheduler } from './lifecycle/steward.ts';
import type { Clock } from './ports/clock.ts';
import { systemClock } from './ports/clock.ts';
import type { KeyStore } from './ports/key-store.ts';
import type { Logger } from './ports/logger.ts';
import type { TokenVerifier } from './ports/token-verifier.ts';

/* Wiring of the data lifecycle (issue 13) for main.ts: erasure, legal holds and retention. */

/** What erasure, holds and retention share: the one screening pass, the keys, the graph's lookups. */
export async function lifecycleDeps(
  config: Config,
  p: {
    store: Neo4jGraphStore;
    ledger: KafkaLedger;
    keys: KeyStore;
    waiter: ProjectionWaiter;
    logger: Logger;
    verifier: TokenVerifier;
  },
): Promise<ErasureDeps & { lookups: Neo4jErasureLookups }> {
  const fingerprintKey = config.fingerprintKey ?? (await ensureDevFingerprintKey(config.stateDir));
  return {
    ledger: p.ledger,
    keys: p.keys,
    lookups: new Neo4jErasureLookups(p.store.db),
    store: p.store.lookups,
    projection: p.waiter,
    verifier: p.verifier,
    approvers: config.erasure.approvers,
    screen: (command, input) => screenCommand(command, input, fingerprintKey).value,
    clock: systemClock,
    ids: { uuid: randomUUID },
    awaitTimeoutMs: config.http.awaitTimeoutMs,
    logger: p.logger,
  };
}

/** The retention rules file, checked before anything starts (a bad file stops the process). */
export async function loadRetentionRules(file: string | undefined): Promise<RetentionRule[] | undefined> {
  return file ? loadJsonFile(RetentionRules, file, 'retention rules') : undefined;
}

/** The steward checks beside the projector, when MUNINN_STEWARD is on (lifecycle/steward.ts). */
export function stewardScheduler(
  config: Config,
  p: { store: Neo4jGraphStore; ledger: KafkaLedger; waiter: ProjectionWaiter; logger: Logger },
  ageClock: Clock = systemClock,
): StewardScheduler | undefined {
  if (!config.steward.enabled) return undefined;
  return new StewardScheduler({
    lookups: new Neo4jStewardLookups(p.store.db),
    ledger: p.ledger,
    projection: p.waiter,
    thresholds: config.steward.thresholds,
    tenants: config.steward.tenants,
    clock: systemClock,
    ageClock,
    ids: { uuid: randomUUID },
    awaitTimeoutMs: config.http.awaitTimeoutMs,
    intervalMs: config.steward.intervalMs,
    logger: p.logger,
  });
}
