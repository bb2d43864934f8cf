import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type IHeaders, type KafkaMessage } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decidePropose, parseCommand, ProposeCommand } from '../../src/domain/commands.ts';
import type { Principal } from '../../src/domain/principal.ts';
import type { LedgerPosition } from '../../src/ports/ledger.ts';
import { freshTenant, PROPOSE, proposal, startApp, type TestApp } from '../support/harness.ts';

type Receipt = { outcome: string; recordId: string; version: number | null; position: string | null };

let app: TestApp;
let tenant: string;
let token: string;
let topic: string;

beforeAll(async () => {
  app = await startApp();
  topic = app.config.kafka.topic;
  tenant = freshTenant('dlq');
  token = await app.token({ tenant });
});
afterAll(() => app?.stop());

const sourceKey = (p: LedgerPosition): string => `${topic}/${p.partition}/${p.offset}`;

const header = (h: IHeaders | undefined, name: string): string | undefined => {
  const v = h?.[name];
  if (v === undefined) return undefined;
  return (Array.isArray(v) ? v : [v]).map((x) => x.toString()).join(',');
};

/**
 * Reads the DLQ from the beginning in a fresh consumer group until every `keys` is seen or `timeoutMs`
 * passes. Returns what it found by key.
 */
async function readDlq(keys: readonly string[], timeoutMs = 30_000): Promise<Map<string, KafkaMessage>> {
  const kafka = new Kafka({
    clientId: 'muninn-test-dlq-reader',
    brokers: [...app.config.kafka.brokers],
    logLevel: logLevel.NOTHING,
  });
  const groupId = `muninn-test-dlq-${randomUUID()}`;
  const consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false });
  const found = new Map<string, KafkaMessage>();
  const wanted = new Set(keys);
  let done!: () => void;
  const allFound = new Promise<void>((resolve) => (done = resolve));
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [app.config.kafka.dlqTopic], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ message }) => {
        const key = message.key?.toString('utf8');
        if (key && wanted.has(key)) {
          found.set(key, message);
          if ([...wanted].every((k) => found.has(k))) done();
        }
      },
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([allFound, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  } finally {
    await consumer.disconnect().catch(() => undefined);
    const admin = kafka.admin();
    await admin
      .connect()
      .then(() => admin.deleteGroups([groupId]))
      .catch(() => undefined)
      .finally(() => admin.disconnect().catch(() => undefined));
  }
  return found;
}

async function proposeAdmitted(label: string): Promise<LedgerPosition> {
  // Its own subject, object and wording, so the write path's relate step admits it plainly.
  const subject = `after${label}${randomUUID().slice(0, 8)}`;
  const object = randomUUID().replace(/-/g, '');
  const p = await app.gql<{ propose: Receipt }>(token, PROPOSE, {
    input: proposal({
      statement: { subject, predicate: 'follows', object, text: `${subject} follows ${object}.` },
    }),
  });
  expect(p.errors, JSON.stringify(p.errors)).toBeUndefined();
  expect(p.data?.propose, `${label}: ${JSON.stringify(p.data?.propose)}`).toMatchObject({
    outcome: 'ADMITTED',
    version: 1,
  });
  const [partition, offset] = p.data!.propose.position!.split(':');
  return { partition: Number(partition), offset: offset! };
}

async function checkpoint(partition: number): Promise<bigint> {
  const cp = (await app.m.store.checkpoints(topic)).find((c) => c.partition === partition);
  return cp ? BigInt(cp.offset) : -1n;
}

/** A well-formed envelope of a real event, stamped with a schema version this build does not know. */
function futureEvent(): string {
  const principal: Principal = {
    iss: app.config.auth.issuer,
    sub: 'tester',
    tenant,
    scopes: new Set(['write']),
    actors: [],
    tokenId: undefined,
    expiresAt: undefined,
  };
  const cmd = parseCommand(
    ProposeCommand,
    proposal({
      statement: {
        subject: `future-${randomUUID()}`,
        predicate: 'is',
        object: 'unknown',
        text: 'Written by a newer build.',
      },
    }),
  );
  const [event] = decidePropose({ principal, now: new Date(), newId: randomUUID }, cmd, [], 'ACTIVE');
  return JSON.stringify({ ...event!, schemaVersion: 99 });
}

describe('dead letters', () => {
  let garbage: LedgerPosition;
  let future: LedgerPosition;
  let afterGarbage: LedgerPosition;
  let afterFuture: LedgerPosition;
  let dlq: Map<string, KafkaMessage>;

  beforeAll(async () => {
    garbage = await app.m.ledger.appendRaw(tenant, 'not json {');
    afterGarbage = await proposeAdmitted('garbage');
    future = await app.m.ledger.appendRaw(tenant, futureEvent());
    afterFuture = await proposeAdmitted('future');
    dlq = await readDlq([sourceKey(garbage), sourceKey(future)]);
  });

  it('the raw appends and the proposals that follow them share the tenant’s partition, in order', () => {
    expect(
      new Set([garbage.partition, afterGarbage.partition, future.partition, afterFuture.partition]).size,
    ).toBe(1);
    expect(BigInt(garbage.offset) < BigInt(afterGarbage.offset)).toBe(true);
    expect(BigInt(afterGarbage.offset) < BigInt(future.offset)).toBe(true);
    expect(BigInt(future.offset) < BigInt(afterFuture.offset)).toBe(true);
  });

  it('garbage bytes are dead-lettered with their source coordinate and "not JSON"; later events still apply', () => {
    const m = dlq.get(sourceKey(garbage));
    expect(m, `no DLQ message with key ${sourceKey(garbage)} within 30 s`).toBeDefined();
    expect(header(m!.headers, 'muninn-source')).toBe(`${topic}/${garbage.partition}/${garbage.offset}`);
    expect(header(m!.headers, 'muninn-reason')).toContain('not JSON');
    expect(header(m!.headers, 'muninn-retryable-after-upgrade')).toBe('false');
    expect(m!.value?.toString('utf8')).toBe('not json {');
  });

  it('a future schemaVersion is dead-lettered as retryable after upgrade; later events still apply', () => {
    const m = dlq.get(sourceKey(future));
    expect(m, `no DLQ message with key ${sourceKey(future)} within 30 s`).toBeDefined();
    expect(header(m!.headers, 'muninn-source')).toBe(`${topic}/${future.partition}/${future.offset}`);
    expect(header(m!.headers, 'muninn-retryable-after-upgrade')).toBe('true');
    expect(header(m!.headers, 'muninn-reason')).toContain('schemaVersion 99');
    // The original bytes are kept, so an upgraded build can replay them.
    expect(JSON.parse(m!.value!.toString('utf8'))).toMatchObject({
      schemaVersion: 99,
      tenant,
      type: 'RecordProposed',
    });
  });

  it('the projection checkpoint for the partition moves past both dead-lettered offsets', async () => {
    const cp = await checkpoint(garbage.partition);
    expect(cp > BigInt(garbage.offset)).toBe(true);
    expect(cp > BigInt(future.offset)).toBe(true);
    expect(cp >= BigInt(afterFuture.offset)).toBe(true);
  });

  it('the parked event’s record never reaches the graph', async () => {
    const parked = dlq.get(sourceKey(future));
    expect(parked).toBeDefined();
    const { payload } = JSON.parse(parked!.value!.toString('utf8')) as { payload: { recordId: string } };
    const r = await app.gql<{ record: unknown }>(token, `query Q($id: ID!) { record(id: $id) { id } }`, {
      id: payload.recordId,
    });
    expect(r.errors).toBeUndefined();
    expect(r.data?.record).toBeNull();
  });
});
