import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { AuditFacts } from '../../domain/audit-chain.ts';
import type { AuditLog } from '../../ports/audit.ts';

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
    const span = this.tracer.startSpan(f.op, {
      kind: SpanKind.SERVER,
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
  const provider = new TracerProvider({
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: endpoint }) })],
  });
  trace.setGlobalTracerProvider(provider);
  return { shutdown: () => provider.shutdown() };
}
