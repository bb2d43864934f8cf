import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { traceCarrierOf } from '../../src/adapters/kafka/kafka-ledger.ts';
import {
  extractContext,
  injectCarrier,
  otelTracing,
  producing,
  registerTracing,
} from '../../src/adapters/tracing/otel.ts';

/**
 * The trace context's trip through a Kafka message: what the ledger injects as headers, the consumer reads
 * back as a carrier and the projector extracts is the producer's span context. Off (nothing registered),
 * nothing is injected and no span is recorded.
 */
const spans = new InMemorySpanExporter();
const kafkaHeaders = (carrier: Record<string, string>) =>
  Object.fromEntries(Object.entries(carrier).map(([k, v]) => [k, Buffer.from(v, 'utf8')]));

describe('tracing off (the default)', () => {
  it('injects nothing, so ledger messages carry no trace headers', async () => {
    const carrier = await producing('ledger append', {}, (c) => Promise.resolve(c));
    expect(carrier).toEqual({});
    expect(traceCarrierOf(kafkaHeaders(carrier))).toBeUndefined();
  });
});

describe('tracing on', () => {
  let tracing: { shutdown(): Promise<void> };
  beforeAll(() => {
    tracing = registerTracing([new SimpleSpanProcessor({ exporter: spans })]);
  });
  afterAll(() => tracing.shutdown());

  it('a producer span’s context round-trips through Kafka headers (bytes) back to the same context', async () => {
    const [carrier, sent] = await producing('ledger append', {}, (c) =>
      Promise.resolve([c, trace.getSpanContext(context.active())!] as const),
    );
    expect(Object.keys(carrier)).toEqual(['traceparent']);
    const back = traceCarrierOf(kafkaHeaders(carrier));
    expect(back).toEqual(carrier);
    const received = trace.getSpanContext(extractContext(back!))!;
    expect(received).toMatchObject({
      traceId: sent.traceId,
      spanId: sent.spanId,
      traceFlags: sent.traceFlags,
      isRemote: true,
    });
  });

  it('takes only traceparent and tracestate from the headers, and nothing from a message without them', () => {
    const headers = {
      traceparent: Buffer.from('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'),
      tracestate: 'vendor=opaque',
      baggage: 'user=alice',
      'muninn-reason': 'not JSON',
    };
    expect(traceCarrierOf(headers)).toEqual({
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tracestate: 'vendor=opaque',
    });
    expect(traceCarrierOf({ 'muninn-reason': 'x' })).toBeUndefined();
    expect(traceCarrierOf(undefined)).toBeUndefined();
  });

  it('continuing: one span per distinct carrier, each a child of the span its carrier names', async () => {
    spans.reset();
    const a = await producing('a', {}, (c) => Promise.resolve(c));
    const b = await producing('b', {}, (c) => Promise.resolve(c));
    const ran = await otelTracing.continuing('projector apply', [a, undefined, b, a], {}, () =>
      Promise.resolve('ran'),
    );
    expect(ran).toBe('ran');
    const applies = spans.getFinishedSpans().filter((s) => s.name === 'projector apply');
    const parentOf = (name: string) =>
      spans
        .getFinishedSpans()
        .find((s) => s.name === name)!
        .spanContext();
    expect(applies.map((s) => s.parentSpanContext?.spanId).sort()).toEqual(
      [parentOf('a').spanId, parentOf('b').spanId].sort(),
    );
    expect(applies.map((s) => s.spanContext().traceId).sort()).toEqual(
      [parentOf('a').traceId, parentOf('b').traceId].sort(),
    );
  });

  it('continuing with no carrier runs the work in no span', async () => {
    spans.reset();
    await otelTracing.continuing('projector apply', [undefined, undefined], {}, () => Promise.resolve());
    expect(spans.getFinishedSpans()).toHaveLength(0);
  });

  it('injectCarrier outside any span injects nothing', () => {
    expect(injectCarrier()).toEqual({});
  });
});
