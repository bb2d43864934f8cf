import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BatchSpanProcessor, TracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace';
import type { AuditFacts } from '../../domain/audit-chain.ts';
import type { AuditLog } from '../../ports/audit.ts';
import type { SpanAttributes, SpanOptions, TraceCarrier, Tracing } from '../../ports/tracing.ts';

/**
 * OpenTelemetry for what the audit trail records: one span per audited operation (its name the root
 * field, attributes who/tenant/purpose/code and the number of ids) carrying the entry as an `audit`
 * event with the ids. Spans go to whatever tracer provider is registered: none by default (the API's
 * no-op), the OTLP/HTTP exporter when MUNINN_OTLP_ENDPOINT is set (startOtlp), a test's in-memory one.
 * The operation's timing is Prometheus's (/metrics); this span marks the decision, not its duration.
 */
export class OtelAuditLog implements AuditLog {
  private readonly tracer = trace.getTracer('muninn');

  append(f: AuditFacts): Promise<void> {
    // A child of the request's server span (the audit entry is written once the outcome is known).
    const span = this.tracer.startSpan(f.op, {
      kind: SpanKind.INTERNAL,
      attributes: {
        'muninn.kind': f.kind,
        'muninn.tenant': f.tenant,
        'muninn.who': f.who,
        'muninn.chain': [...f.chain],
        'muninn.purpose': f.purpose ?? '',
        'muninn.code': f.code,
        'muninn.ids.count': f.ids.length,
      },
    });
    span.addEvent('audit', { 'muninn.ids': f.ids.slice(0, 1000) });
    if (f.code !== 'OK') span.setStatus({ code: SpanStatusCode.ERROR, message: f.code });
    span.end();
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Both sinks, in order: the chained file first (the record of truth), then the spans. */
export function teeAudit(...logs: readonly AuditLog[]): AuditLog {
  return {
    append: async (f) => {
      for (const l of logs) await l.append(f);
    },
    close: async () => {
      for (const l of logs) await l.close();
    },
  };
}

/** Registers an OTLP/HTTP exporter (`endpoint`: the collector's traces URL) as the global tracer provider. */
export function startOtlp(endpoint: string): { shutdown(): Promise<void> } {
  return registerTracing([new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: endpoint }) })]);
}

/**
 * Turns tracing on in this process: the span processors (an exporter's), the W3C trace-context
 * propagator (what the ledger writes into each message's headers: `traceparent`/`tracestate` only; no
 * baggage propagator, so nothing a caller puts in baggage reaches the ledger) and an AsyncLocalStorage
 * context manager (the active span follows the request through every await). Unregistered — the
 * default — the API's no-ops stay in place: no span is recorded and no header written.
 */
export function registerTracing(spanProcessors: SpanProcessor[]): { shutdown(): Promise<void> } {
  const provider = new TracerProvider({ spanProcessors });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return { shutdown: () => provider.shutdown() };
}

/** The carrier of a context (the active one by default): empty when tracing is off or nothing is sampled. */
export function injectCarrier(ctx: Context = context.active()): TraceCarrier {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

/** The context a carrier names, under the root: only its trace parent is taken, nothing else. */
export function extractContext(carrier: TraceCarrier): Context {
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/**
 * Runs `work` in a producer span (a child of the active context) and gives it the carrier naming that
 * span: the ledger sends it with each message, and the projector's apply continues the trace from it.
 */
export async function producing<T>(
  name: string,
  attributes: SpanAttributes,
  work: (carrier: TraceCarrier) => Promise<T>,
): Promise<T> {
  return tracer().startActiveSpan(name, { kind: SpanKind.PRODUCER, attributes }, (span) =>
    ended(span, () => work(injectCarrier())),
  );
}

const tracer = () => trace.getTracer('muninn');

async function ended<T>(span: Span, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.name : 'error' });
    throw e;
  } finally {
    span.end();
  }
}

/** The Tracing port over the global OpenTelemetry API (no-op until registerTracing). */
export const otelTracing: Tracing = {
  inSpan<T>(name: string, o: SpanOptions, work: () => Promise<T>): Promise<T> {
    const parent = o.parent ? extractContext(o.parent) : context.active();
    const kind = o.kind === 'server' ? SpanKind.SERVER : SpanKind.INTERNAL;
    return tracer().startActiveSpan(name, { kind, attributes: { ...o.attributes } }, parent, (span) =>
      ended(span, work),
    );
  },

  async continuing<T>(
    name: string,
    carriers: ReadonlyArray<TraceCarrier | undefined>,
    attributes: SpanAttributes,
    work: () => Promise<T>,
  ): Promise<T> {
    const parents = new Map<string, TraceCarrier>();
    for (const c of carriers) if (c?.['traceparent']) parents.set(c['traceparent'], c);
    if (parents.size === 0) return work();
    const spans = [...parents.values()].map((c) =>
      tracer().startSpan(name, { kind: SpanKind.CONSUMER, attributes: { ...attributes } }, extractContext(c)),
    );
    try {
      return await work();
    } catch (e) {
      const message = e instanceof Error ? e.name : 'error';
      for (const s of spans) s.setStatus({ code: SpanStatusCode.ERROR, message });
      throw e;
    } finally {
      for (const s of spans) s.end();
    }
  },
};
