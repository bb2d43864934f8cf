/**
 * Distributed tracing, as the API and the projector see it (OpenTelemetry lives in src/adapters/tracing).
 * With no exporter configured every call only runs `work`: the adapter then hands out no-op spans.
 */

/**
 * A trace context as it travels beside a message or a request: W3C `traceparent` (and `tracestate`),
 * nothing else. Opaque to the use cases: they pass it from where it came to where it continues.
 */
export type TraceCarrier = Readonly<Record<string, string>>;

export type SpanAttributes = Readonly<Record<string, string | number | boolean>>;

export interface SpanOptions {
  readonly kind?: 'server' | 'internal';
  readonly attributes?: SpanAttributes;
  /** Continue the trace this carrier names instead of the active one (an incoming request's headers). */
  readonly parent?: TraceCarrier;
}

export interface Tracing {
  /** Runs `work` in a new span (a child of the active one, or of `parent`); the span is active within it. */
  inSpan<T>(name: string, o: SpanOptions, work: () => Promise<T>): Promise<T>;
  /**
   * Runs `work` once inside one span per distinct carrier, each a child of the trace its carrier names:
   * the projector applies the events of many requests in one transaction, and each request's trace shows
   * the apply of its own events. Messages without a carrier (older events, tracing off) add no span.
   */
  continuing<T>(
    name: string,
    carriers: ReadonlyArray<TraceCarrier | undefined>,
    attributes: SpanAttributes,
    work: () => Promise<T>,
  ): Promise<T>;
}

/** No tracing at all (tests and tools that wire none). */
export const noTracing: Tracing = {
  inSpan: (_name, _o, work) => work(),
  continuing: (_name, _carriers, _attributes, work) => work(),
};
