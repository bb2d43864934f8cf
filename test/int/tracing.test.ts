import { randomUUID } from 'node:crypto';
import { createClient } from 'graphql-ws';
import { Kafka, logLevel, type KafkaMessage } from 'kafkajs';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { registerTracing } from '../../src/adapters/tracing/otel.ts';
import { decidePropose, parseCommand, ProposeCommand } from '../../src/domain/commands.ts';
import { encodeEvent } from '../../src/domain/event-wire.ts';
import type { Principal } from '../../src/domain/principal.ts';
import { freshTenant, PROPOSE, proposal, startApp, type TestApp } from '../support/harness.ts';

/**
 * One trace from the API to the projection, on the real stack: the request's server span, the ledger
 * append's producer span (its context sent as W3C headers on each Kafka message) and the projector's
 * apply of those events, continued from the headers. Events without headers (written before tracing, or
 * with it off) still apply.
 */
const spans = new InMemorySpanExporter();
const tracing = registerTracing([new SimpleSpanProcessor({ exporter: spans })]);

let app: TestApp;
let token: string;
const tenant = freshTenant('trace');
const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/;

beforeAll(async () => {
  app = await startApp();
  token = await app.token({ tenant });
});
afterAll(async () => {
  await app?.stop();
  await tracing.shutdown();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function eventually<T>(find: () => T | undefined, timeoutMs = 30_000): Promise<T | undefined> {
  for (const end = Date.now() + timeoutMs; Date.now() < end; await sleep(100)) {
    const v = find();
    if (v !== undefined) return v;
  }
  return find();
}

/** The ancestors of `span` among the finished spans, nearest first. */
function ancestors(span: ReadableSpan): ReadableSpan[] {
  const all = spans.getFinishedSpans();
  const chain: ReadableSpan[] = [];
  for (let s: ReadableSpan | undefined = span; s?.parentSpanContext;) {
    const parentId: string = s.parentSpanContext.spanId;
    s = all.find((x) => x.spanContext().spanId === parentId);
    if (s) chain.push(s);
  }
  return chain;
}

/** The raw Kafka message at `position` ("partition:offset") of the ledger topic. */
async function messageAt(position: string): Promise<KafkaMessage | undefined> {
  const [partition, offset] = position.split(':') as [string, string];
  const kafka = new Kafka({
    clientId: 'muninn-test-trace',
    brokers: [...app.config.kafka.brokers],
    logLevel: logLevel.NOTHING,
  });
  const groupId = `muninn-test-trace-${randomUUID()}`;
  const consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false });
  let found: KafkaMessage | undefined;
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [app.config.kafka.topic], fromBeginning: false });
    await consumer.run({
      autoCommit: false,
      eachMessage: ({ partition: p, message }) => {
        if (p === Number(partition) && message.offset === offset) found = message;
        return Promise.resolve();
      },
    });
    consumer.seek({ topic: app.config.kafka.topic, partition: Number(partition), offset });
    await eventually(() => found, 20_000);
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

describe('trace context from the API through the ledger to the projector', () => {
  let position: string;

  it('the projector’s apply is a descendant of the request’s server span, in the same trace', async () => {
    spans.reset();
    const r = await app.gql<{ propose: { outcome: string; position: string } }>(token, PROPOSE, {
      input: proposal({ await: true }),
    });
    expect(r.errors).toBeUndefined();
    expect(r.data!.propose.outcome).toBe('ADMITTED');
    position = r.data!.propose.position;

    const server = spans.getFinishedSpans().find((s) => s.name === 'POST /graphql');
    expect(server).toBeDefined();
    const traceId = server!.spanContext().traceId;
    const apply = await eventually(() =>
      spans
        .getFinishedSpans()
        .find((s) => s.name === 'projector apply' && s.spanContext().traceId === traceId),
    );
    expect(apply, 'a projector span in the request’s trace').toBeDefined();
    const chain = ancestors(apply!).map((s) => s.name);
    // apply ← ledger append (producer) ← … ← the server span.
    expect(chain[0]).toBe('ledger append');
    expect(chain).toContain('POST /graphql');
    expect(ancestors(apply!).at(-1)!.spanContext().spanId).toBe(server!.spanContext().spanId);
  });

  it('the audit span is a child of the server span', async () => {
    const server = spans.getFinishedSpans().find((s) => s.name === 'POST /graphql')!;
    // The audit entry is appended after the response is sent (file first, then the span).
    const audit = await eventually(() => spans.getFinishedSpans().find((s) => s.name === 'mutation.propose'));
    expect(audit?.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
  });

  it('a ledger message carries the trace context as W3C headers and nothing else', async () => {
    const m = await messageAt(position);
    expect(m).toBeDefined();
    const headers = m!.headers ?? {};
    expect(Object.keys(headers).sort()).toEqual(['traceparent']);
    expect(String(headers['traceparent'])).toMatch(TRACEPARENT);
    const append = spans.getFinishedSpans().find((s) => s.name === 'ledger append')!;
    expect(String(headers['traceparent'])).toContain(append.spanContext().spanId);
  });

  it('a caller’s traceparent is continued: the request joins the caller’s trace', async () => {
    spans.reset();
    const callerTrace = randomUUID().replaceAll('-', '');
    const res = await fetch(app.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
        traceparent: `00-${callerTrace}-00f067aa0ba902b7-01`,
      },
      body: JSON.stringify({ query: PROPOSE, variables: { input: proposal({ await: true }) } }),
    });
    expect(res.status).toBe(200);
    const apply = await eventually(() =>
      spans
        .getFinishedSpans()
        .find((s) => s.name === 'projector apply' && s.spanContext().traceId === callerTrace),
    );
    expect(apply).toBeDefined();
  });

  it('a mutation over WebSocket is traced the same way, from a WS server span to the projector', async () => {
    spans.reset();
    const client = createClient({
      url: app.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${token}` },
    });
    try {
      const result = await new Promise<unknown>((resolve, reject) => {
        let last: unknown;
        client.subscribe(
          { query: PROPOSE, variables: { input: proposal({ await: true }) } },
          { next: (r) => (last = r), error: reject, complete: () => resolve(last) },
        );
      });
      expect(result).toMatchObject({ data: { propose: { outcome: 'ADMITTED' } } });
    } finally {
      await client.dispose();
    }
    const server = spans.getFinishedSpans().find((s) => s.name === 'WS /graphql');
    expect(server).toBeDefined();
    const apply = await eventually(() =>
      spans
        .getFinishedSpans()
        .find(
          (s) => s.name === 'projector apply' && s.spanContext().traceId === server!.spanContext().traceId,
        ),
    );
    expect(apply).toBeDefined();
    expect(ancestors(apply!).at(-1)!.spanContext().spanId).toBe(server!.spanContext().spanId);
  });

  it('an event without trace headers (written before tracing) still applies, in no trace', async () => {
    spans.reset();
    const principal: Principal = {
      iss: app.config.auth.issuer,
      sub: 'tester',
      tenant,
      scopes: new Set(['write']),
      actors: [],
      tokenId: undefined,
      expiresAt: undefined,
    };
    const cmd = parseCommand(ProposeCommand, proposal());
    const events = decidePropose({ principal, now: new Date(), newId: randomUUID }, cmd, [], 'ACTIVE');
    for (const e of events) await app.m.ledger.appendRaw(tenant, encodeEvent(e));
    const recordId = (events.at(-1)!.payload as { recordId: string }).recordId;
    // Waits for this record, not for every partition: the shared test topic's other partitions may carry
    // checkpoints an earlier file's wipe removed, so "caught up everywhere" is not this test's question.
    const read = () =>
      app.gql<{ record: { id: string } | null }>(
        token,
        `query Q($id: ID!) { record(id: $id, purpose: "test") { id } }`,
        { id: recordId },
      );
    let r = await read();
    for (const end = Date.now() + 60_000; !r.data?.record && Date.now() < end; await sleep(200))
      r = await read();
    expect(r.errors).toBeUndefined();
    expect(r.data!.record?.id).toBe(recordId);
    expect(spans.getFinishedSpans().filter((s) => s.name === 'projector apply')).toHaveLength(0);
  });
});
