import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, inject } from 'vitest';
import { load, type Config } from '../../src/config/index.ts';
import { connectAdapters } from '../../src/compose.ts';
import { startMuninn, type Muninn } from '../../src/main.ts';
import { signDevToken, ensureDevKeys, type DevActClaim } from '../../src/adapters/auth/dev-keys.ts';
import type { Clock } from '../../src/ports/clock.ts';
import type { Checkpoints } from '../../src/ports/graph.ts';
import type { Ledger } from '../../src/ports/ledger.ts';
import { silentLogger, type Logger } from '../../src/ports/logger.ts';

/** The stack's endpoints, as the global setup found or started them. */
export const endpoints = () => ({ NEO4J_URI: inject('neo4jUri'), KAFKA_BROKERS: inject('kafkaBrokers') });

/** A config for a test: real servers, a private state dir (dev keys), port 0, optional overrides. */
export function testConfig(overrides: Record<string, string> = {}): Config {
  const stateDir = mkdtempSync(join(tmpdir(), 'muninn-test-'));
  return load({
    ...endpoints(),
    MUNINN_ENV: 'test',
    MUNINN_PORT: '0',
    MUNINN_STATE_DIR: stateDir,
    // The run's one key store (global-setup.ts): every app and spawned process opens every sealed event.
    MUNINN_KEY_DIR: inject('keyDir'),
    MUNINN_LOG_LEVEL: 'silent',
    // The tests' own ledger topic and consumer group, never the product's defaults: `npm start` and
    // `npm test` share the local servers, and each seals its events with its own key store. On the shared
    // topic, a test app's projector met `npm start`'s events and retried them for ever (UNAVAILABLE: a key it
    // never held), so every awaited test write came back PENDING; `npm start` after `npm test` stalled the
    // same way on the tests' events. Tests that need a topic of their own still set one.
    MUNINN_LEDGER_TOPIC: 'muninn.test.ledger.v1',
    MUNINN_DLQ_TOPIC: 'muninn.test.ledger.v1.dlq',
    MUNINN_PROJECTOR_GROUP: 'muninn-test-projector',
    // Awaited writes wait for the projection; on a loaded 2-core machine the first one (consumer-group join,
    // model warm-up) can take longer than the 15 s default, which would turn a correct write into PENDING.
    MUNINN_AWAIT_TIMEOUT_MS: '60000',
    // The same loaded machine can leave the projection seconds behind a burst of unawaited writes; the
    // tests that are about backpressure set their own limits (test/unit/overload.test.ts, bench:ledger).
    MUNINN_WRITE_MAX_LAG_MS: '60000',
    // Likewise the busy rule (on by default): a test's burst of writes beside a loaded machine's other work
    // is not an overload (test/e2e/overload.test.ts sets its own).
    MUNINN_WRITE_MAX_BUSY: '1',
    ...overrides,
  });
}

export interface TestApp {
  readonly m: Muninn;
  readonly url: string;
  readonly config: Config;
  token(o: {
    tenant: string;
    sub?: string;
    scopes?: string[];
    ttlSeconds?: number;
    audience?: string;
    act?: DevActClaim;
  }): Promise<string>;
  gql<T = Record<string, unknown>>(
    token: string | undefined,
    query: string,
    variables?: Record<string, unknown>,
  ): Promise<GqlResult<T>>;
  stop(): Promise<void>;
}

export interface GqlResult<T> {
  readonly status: number;
  readonly data: T | null | undefined;
  readonly errors: ReadonlyArray<{ message: string; extensions?: Record<string, unknown> }> | undefined;
}

export async function startApp(
  overrides: Record<string, string> = {},
  logger: Logger = silentLogger,
  opts: { readonly retentionClock?: Clock; readonly stewardClock?: Clock } = {},
): Promise<TestApp> {
  const config = testConfig(overrides);
  await ensureDevKeys(config.stateDir);
  const m = await startMuninn(config, logger, opts);
  const url = m.api!.url;
  return {
    m,
    url,
    config,
    token: (o) =>
      signDevToken({
        stateDir: config.stateDir,
        issuer: config.auth.issuer,
        audience: o.audience ?? config.auth.audience,
        tenant: o.tenant,
        sub: o.sub ?? 'tester',
        scopes: o.scopes ?? ['read', 'write'],
        ttlSeconds: o.ttlSeconds ?? 600,
        ...(o.act ? { act: o.act } : {}),
      }),
    gql: (token, query, variables) => gql(url, token, query, variables),
    stop: () => m.stop(),
  };
}

export async function gql<T>(
  url: string,
  token: string | undefined,
  query: string,
  variables?: Record<string, unknown>,
  timeoutMs?: number,
): Promise<GqlResult<T>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
    ...(timeoutMs ? { signal: AbortSignal.timeout(timeoutMs) } : {}),
  });
  const body = (await res.json()) as { data?: T; errors?: GqlResult<T>['errors'] };
  return { status: res.status, data: body.data, errors: body.errors };
}

/**
 * The adapters on a topic of their own (one partition), for tests of the ledger itself: the topics are
 * made before the file's tests and the connections closed after them.
 */
export function ledgerOnFreshTopic(name: string) {
  const topic = `muninn.test.${name}.${randomUUID().slice(0, 8)}`;
  const adapters = connectAdapters(
    testConfig({
      MUNINN_LEDGER_TOPIC: topic,
      MUNINN_DLQ_TOPIC: `${topic}.dlq`,
      MUNINN_LEDGER_PARTITIONS: '1',
    }),
    silentLogger,
  );
  beforeAll(() => adapters.ledger.ensureTopics());
  afterAll(async () => {
    await adapters.ledger.close();
    await adapters.store.close();
  });
  return { topic, adapters };
}

/** A tenant name no other test uses. */
export const freshTenant = (prefix = 't'): string => `${prefix}-${randomUUID().slice(0, 8)}`;

export const PROPOSE = `mutation P($input: ProposeInput!) { propose(input: $input) { outcome recordId version reason eventIds position } }`;
export const REVISE = `mutation R($input: ReviseInput!) { revise(input: $input) { outcome recordId version reason eventIds position } }`;
export const RETRACT = `mutation X($input: RetractInput!) { retract(input: $input) { outcome recordId version reason eventIds position } }`;

export function proposal(o: Partial<Record<string, unknown>> = {}): Record<string, unknown> {
  // A distinct statement each time, so that tests do not reinforce each other's records by accident.
  const n = randomUUID().slice(0, 8);
  return {
    namespace: 'acme/platform',
    class: 'FACT',
    statement: {
      subject: `service-${n}`,
      predicate: 'uses',
      object: 'postgres',
      text: `Service ${n} uses Postgres.`,
    },
    purpose: 'test',
    idempotencyKey: randomUUID(),
    ...o,
  };
}

/**
 * Whether the projection has applied every event on the topic (each partition's checkpoint at its end),
 * read under the checkpoints' locks: a plain read can show the last checkpoint while its transaction's
 * records are still being applied, and a count right after missed 34 of 1,500 records in one run of
 * test/int/rebuild-fence.test.ts.
 */
export async function caughtUp(
  ledger: Pick<Ledger, 'offsets'>,
  store: Pick<Checkpoints, 'checkpointsApplied'>,
  topic: string,
): Promise<boolean> {
  const [offsets, cps] = await Promise.all([ledger.offsets(), store.checkpointsApplied(topic)]);
  return offsets.every(
    (o) =>
      BigInt(o.highWatermark) === 0n ||
      BigInt(cps.find((c) => c.partition === o.partition)?.offset ?? -1) === BigInt(o.highWatermark) - 1n,
  );
}
