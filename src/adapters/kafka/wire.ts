import { readFileSync } from 'node:fs';
import type { IHeaders, KafkaConfig, SASLOptions } from 'kafkajs';
import type { TraceCarrier } from '../../ports/tracing.ts';
import type { LedgerMessage } from '../../ports/ledger.ts';

/**
 * The Kafka wire details of the ledger: TLS and SASL, which partition a key goes to, how much goes in one
 * send, the trace headers.
 */

export interface KafkaSasl {
  readonly mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512';
  readonly username: string;
  readonly password: string;
}

/**
 * KafkaJS's `ssl` and `sasl` options from the config's: TLS trusting the CA file's PEM (read once, here:
 * a missing file fails at start) or the system's CAs; SASL with the mechanism's credentials.
 */
export function kafkaSecurity(
  tls: { readonly caFile: string | undefined } | null,
  sasl: KafkaSasl | null,
): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  return {
    ...(tls ? { ssl: tls.caFile ? { ca: [readFileSync(tls.caFile, 'utf8')] } : true } : {}),
    ...(sasl ? { sasl: saslOf(sasl) } : {}),
  };
}

/** One KafkaJS type per mechanism, hence the switch. */
function saslOf(s: KafkaSasl): SASLOptions {
  const { username, password } = s;
  switch (s.mechanism) {
    case 'plain':
      return { mechanism: 'plain', username, password };
    case 'scram-sha-256':
      return { mechanism: 'scram-sha-256', username, password };
    case 'scram-sha-512':
      return { mechanism: 'scram-sha-512', username, password };
  }
}

/**
 * The trace context a message carries: its `traceparent` and `tracestate` headers and nothing else (a
 * message written before tracing, or with tracing off, has none). Header values arrive as bytes.
 */
export function traceCarrierOf(headers: IHeaders | undefined): TraceCarrier | undefined {
  let carrier: Record<string, string> | undefined;
  for (const name of TRACE_HEADERS) {
    const raw = headers?.[name];
    const v = Array.isArray(raw) ? raw[0] : raw;
    if (v === undefined) continue;
    carrier ??= {};
    carrier[name] = typeof v === 'string' ? v : v.toString('utf8');
  }
  return carrier;
}

const TRACE_HEADERS = ['traceparent', 'tracestate'] as const;

/**
 * How many of the queued messages go in the next send: at most 5,000, and at most ~900 KB in all, ending
 * where an append ends (a message marked `continues` is not the last of a send). The broker refuses a
 * record batch over its `message.max.bytes` (1 MiB by default) with MESSAGE_TOO_LARGE — failing every
 * write of the send — and a busy API queues hundreds of events, each carrying an embedding, between two
 * sends. An append is one request's events (an entity and the record about it): in one send it is one
 * record batch, stored or refused whole, and a consumer's fetch holds all of it or none. Split over two,
 * the projection could apply the entity without its record, and a failed second send would leave half a
 * request on the ledger. Only an append over the limit on its own (an episode of hundreds of statements)
 * still goes out in several sends.
 */
export function sendSize(
  queue: ReadonlyArray<{
    key: string;
    value: string;
    headers?: Readonly<Record<string, string>> | undefined;
    continues?: boolean;
  }>,
): number {
  let bytes = 0;
  let whole = 0;
  for (let n = 0; n < queue.length; n++) {
    const m = queue[n]!;
    bytes += Buffer.byteLength(m.value) + Buffer.byteLength(m.key) + 64;
    for (const [k, v] of Object.entries(m.headers ?? {})) bytes += k.length + v.length + 8;
    if (n > 0 && (bytes > SEND_MAX_BYTES || n >= 5000)) return whole || n;
    if (!m.continues) whole = n + 1;
  }
  return Math.max(1, queue.length);
}

/** The header on every message of an append but its last: more of the same append follow. */
export const CONTINUES = 'muninn-continues';

/** A fetched message as the Ledger port gives it: its coordinates, bytes, trace context and mark. */
export function ledgerMessage(
  partition: number,
  m: { offset: string; key: Buffer | null; value: Buffer | null; headers?: IHeaders | undefined },
): LedgerMessage {
  return {
    partition,
    offset: m.offset,
    key: m.key?.toString('utf8') ?? null,
    value: m.value,
    trace: traceCarrierOf(m.headers),
    continues: m.headers?.[CONTINUES] !== undefined,
  };
}

const SEND_MAX_BYTES = 900 * 1024;

/** murmur2 of the key, as Kafka's Java client does, so every client puts a tenant on the same partition. */
export function partitioner(numPartitions: number): (key: string) => number {
  return (key) => (toPositive(murmur2(Buffer.from(key, 'utf8'))) % numPartitions) >>> 0;
}

function toPositive(x: number): number {
  return x & 0x7fffffff;
}

function murmur2(data: Buffer): number {
  const length = data.length;
  const seed = 0x9747b28c;
  const m = 0x5bd1e995;
  const r = 24;
  let h = seed ^ length;
  const length4 = length >> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4;
    let k =
      (data[i4]! & 0xff) +
      ((data[i4 + 1]! & 0xff) << 8) +
      ((data[i4 + 2]! & 0xff) << 16) +
      ((data[i4 + 3]! & 0xff) << 24);
    k = Math.imul(k, m);
    k ^= k >>> r;
    k = Math.imul(k, m);
    h = Math.imul(h, m);
    h ^= k;
  }
  const idx = length4 * 4;
  const rem = length & 3;
  if (rem === 3) h ^= (data[idx + 2]! & 0xff) << 16;
  if (rem >= 2) h ^= (data[idx + 1]! & 0xff) << 8;
  if (rem >= 1) {
    h ^= data[idx]! & 0xff;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}
