import { Kafka, logLevel, type Admin, type Consumer, type EachBatchPayload, type LogEntry } from 'kafkajs';
import { kafkaLogLevel } from './log-level.ts';
import { type LedgerEvent } from '../../domain/events.ts';
import { encodeEvent } from '../../domain/event-wire.ts';
import { MuninnError, unavailable } from '../../domain/errors.ts';
import type {
  DeadLetter,
  Ledger,
  LedgerBatch,
  LedgerPosition,
  LedgerSubscription,
  PartitionOffsets,
} from '../../ports/ledger.ts';
import type { Logger } from '../../ports/logger.ts';
import { producing } from '../tracing/otel.ts';
import { ledgerProducer, ProducerSlot } from './producer.ts';
import {
  CONTINUES,
  kafkaSecurity,
  ledgerMessage,
  partitioner,
  sendSize,
  traceCarrierOf,
  type KafkaSasl,
} from './wire.ts';

export { partitioner, traceCarrierOf };

export interface KafkaLedgerOptions {
  brokers: readonly string[];
  clientId: string;
  topic: string;
  dlqTopic: string;
  partitions: number;
  logger: Logger;
  /** Encodes a call's events for the wire (sealing their personal parts); default: plain JSON. */
  encode?: (events: readonly LedgerEvent[]) => Promise<string[]>;
  /** TLS to the brokers, trusting the CA in `caFile` (PEM) or else the system's CAs. */
  tls?: { readonly caFile: string | undefined } | null;
  /** SASL authentication (the password is never logged: KafkaJS's log lines pass through logCreator). */
  sasl?: KafkaSasl | null;
}

type ConsumeOptions = Parameters<Ledger['consume']>[0];

interface Pending {
  key: string;
  value: string;
  /** The W3C trace context of the append, and the continuation mark (absent when neither applies). */
  headers: Record<string, string> | undefined;
  /** More events of the same append follow this one: no send ends here (see sendSize). */
  continues: boolean;
  resolve: (p: LedgerPosition) => void;
  reject: (e: unknown) => void;
}

/**
 * The Kafka binding of the Ledger port (KafkaJS 2.2.4, unmaintained: everything vendor-specific stays in
 * this file). The producer is idempotent with one request in flight; appends are group-committed: while
 * one send is in flight, new appends queue and go out together in the next send, which keeps ordering
 * and lifts throughput well past one round trip per write.
 */
export class KafkaLedger implements Ledger {
  private readonly kafka: Kafka;
  private readonly producer: ProducerSlot;
  private admin: Admin | undefined;
  private queue: Pending[] = [];
  private sending = false;
  private readonly consumers = new Set<Consumer>();

  constructor(private readonly o: KafkaLedgerOptions) {
    const log = o.logger.child({ component: 'kafka' });
    this.kafka = new Kafka({
      clientId: o.clientId,
      brokers: [...o.brokers],
      logLevel: logLevel.WARN,
      logCreator:
        () =>
        ({ level, log: entry }: LogEntry) => {
          const { message, ...rest } = entry;
          const fields = { broker: rest['broker'], groupId: rest['groupId'], error: rest['error'] };
          log[kafkaLogLevel(level, fields.error)](fields, String(message));
        },
      retry: { retries: 8, initialRetryTime: 200, maxRetryTime: 5000 },
      ...kafkaSecurity(o.tls ?? null, o.sasl ?? null),
    });
    this.producer = new ProducerSlot(() => ledgerProducer(this.kafka));
  }

  async ensureTopics(): Promise<void> {
    const admin = await this.getAdmin();
    const existing = new Set(await admin.listTopics());
    const topics = [
      { topic: this.o.topic, numPartitions: this.o.partitions },
      { topic: this.o.dlqTopic, numPartitions: 1 },
    ].filter((t) => !existing.has(t.topic));
    if (topics.length) {
      try {
        await admin.createTopics({
          topics: topics.map((t) => ({
            ...t,
            replicationFactor: 1,
            configEntries: [
              { name: 'cleanup.policy', value: 'delete' },
              { name: 'retention.ms', value: '-1' },
            ],
          })),
          waitForLeaders: true,
        });
      } catch (e) {
        // Another instance may have created it between list and create.
        if (!String((e as Error).message).includes('already exists')) throw e;
      }
    }
  }

  append(events: readonly LedgerEvent[]): Promise<LedgerPosition[]> {
    // The call's trace context is taken here, in the caller's context: the group-committed send that
    // carries the events runs in whichever append started it.
    const attributes = {
      'messaging.system': 'kafka',
      'messaging.destination.name': this.o.topic,
      'messaging.batch.message_count': events.length,
    };
    return producing('ledger append', attributes, async (carrier) => {
      // Encode the whole call first, then enqueue it synchronously: its events stay in order and together.
      const values = this.o.encode ? await this.o.encode(events) : events.map(encodeEvent);
      const traced = Object.keys(carrier).length ? { ...carrier } : undefined;
      const last = events.length - 1;
      return this.enqueue(
        events.map((e, i) => ({
          key: e.tenant,
          value: values[i]!,
          headers: i < last ? { ...traced, [CONTINUES]: '1' } : traced,
          continues: i < last,
        })),
      );
    });
  }

  async appendRaw(key: string, value: string | Uint8Array): Promise<LedgerPosition> {
    const v = typeof value === 'string' ? value : Buffer.from(value).toString('utf8');
    const [position] = await this.enqueue([{ key, value: v, headers: undefined, continues: false }]);
    return position!;
  }

  /**
   * Queue one append's messages together, then start a send if none is in flight: the send takes all of
   * them (sendSize ends a send inside an append only when the append alone is over its limit), so one
   * append is one record batch, stored or refused as a whole, and a consumer's fetch (whole record
   * batches) never holds part of one.
   */
  private enqueue(items: ReadonlyArray<Omit<Pending, 'resolve' | 'reject'>>): Promise<LedgerPosition[]> {
    const positions = items.map(
      (item) =>
        new Promise<LedgerPosition>((resolve, reject) => this.queue.push({ ...item, resolve, reject })),
    );
    if (!this.sending) void this.flush();
    return Promise.all(positions);
  }

  private async flush(): Promise<void> {
    this.sending = true;
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, sendSize(this.queue));
        try {
          const meta = await this.producer.send({
            topic: this.o.topic,
            acks: -1,
            messages: batch.map((p) => ({ key: p.key, value: p.value, headers: p.headers })),
          });
          // One send = one record batch per partition; offsets within it are consecutive in send order.
          const base = new Map(meta.map((m) => [m.partition, BigInt(m.baseOffset ?? '0')]));
          const partitionOf = partitioner(this.o.partitions);
          const seen = new Map<number, bigint>();
          for (const p of batch) {
            const partition = partitionOf(p.key);
            const i = seen.get(partition) ?? 0n;
            seen.set(partition, i + 1n);
            const b = base.get(partition);
            if (b === undefined) {
              p.reject(new MuninnError('INTERNAL', 'ledger append: partition missing from broker reply'));
            } else p.resolve({ partition, offset: String(b + i) });
          }
        } catch (e) {
          const err = unavailable('ledger unavailable', e);
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      this.sending = false;
    }
  }

  async deadLetter(d: DeadLetter): Promise<void> {
    await this.producer.send({
      topic: this.o.dlqTopic,
      acks: -1,
      messages: [
        {
          key: `${this.o.topic}/${d.sourcePartition}/${d.sourceOffset}`,
          value: d.value ? Buffer.from(d.value) : null,
          headers: {
            'muninn-reason': d.reason,
            'muninn-source': `${this.o.topic}/${d.sourcePartition}/${d.sourceOffset}`,
            'muninn-retryable-after-upgrade': String(d.retryableAfterUpgrade),
          },
        },
      ],
    });
  }

  async offsets(): Promise<PartitionOffsets[]> {
    const admin = await this.getAdmin();
    const res = await admin.fetchTopicOffsets(this.o.topic);
    return res
      .map((r) => ({ partition: r.partition, highWatermark: r.high, low: r.low }))
      .sort((a, b) => a.partition - b.partition);
  }

  async consume(opts: ConsumeOptions): Promise<LedgerSubscription> {
    const consumer = this.kafka.consumer({
      groupId: opts.groupId,
      allowAutoTopicCreation: false,
      sessionTimeout: opts.sessionTimeoutMs,
      heartbeatInterval: Math.max(500, Math.floor(opts.sessionTimeoutMs / 10)),
      // A bounded chunk per partition and fetch: a hot tenant's backlog is applied a chunk at a time, and
      // the next fetch brings the other partitions' events in beside it (see partitionsConsumedConcurrently).
      maxBytesPerPartition: 1024 * 1024,
    });
    this.consumers.add(consumer);
    let crashed!: (e: unknown) => void;
    let stopped!: () => void;
    const done = new Promise<void>((res, rej) => {
      crashed = rej;
      stopped = res;
    });
    done.catch(() => undefined);
    let joined = false;
    consumer.on(consumer.events.GROUP_JOIN, () => (joined = true));
    consumer.on(consumer.events.REBALANCING, () => (joined = false));
    consumer.on(consumer.events.STOP, () => (joined = false));
    consumer.on(consumer.events.CRASH, (ev) => {
      joined = false;
      if (!ev.payload.restart) crashed(ev.payload.error);
    });
    await consumer.connect();
    await consumer.subscribe({ topics: [this.o.topic], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      // Partitions are applied side by side: a tenant lives on one partition (the key is the tenant), so
      // its events keep their order, and a hot tenant's backlog does not hold up the others'. Partitions
      // share no graph state (every node is a tenant's; checkpoints are per partition).
      partitionsConsumedConcurrently: Math.max(1, this.o.partitions),
      eachBatch: (payload) => applyBatch(consumer, opts, payload),
    });
    return {
      done,
      joined: () => joined,
      stop: async () => {
        await consumer.disconnect();
        this.consumers.delete(consumer);
        stopped();
      },
    };
  }

  async readAll(onBatch: (batch: LedgerBatch) => Promise<void>, maxBatch: number): Promise<void> {
    const ends = new Map((await this.offsets()).map((o) => [o.partition, BigInt(o.highWatermark)]));
    const pending = new Set([...ends].filter(([, hw]) => hw > 0n).map(([p]) => p));
    if (pending.size === 0) return;
    const groupId = `muninn-rebuild-${process.pid}-${Date.now()}`;
    const consumer = this.kafka.consumer({
      groupId,
      allowAutoTopicCreation: false,
      maxBytesPerPartition: 16 * 1024 * 1024,
      maxBytes: 64 * 1024 * 1024,
    });
    await consumer.connect();
    await consumer.subscribe({ topics: [this.o.topic], fromBeginning: true });
    let finish!: () => void;
    let fail!: (e: unknown) => void;
    const finished = new Promise<void>((res, rej) => {
      finish = res;
      fail = rej;
    });
    consumer.on(consumer.events.CRASH, (ev) => fail(ev.payload.error));
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, heartbeat, resolveOffset }) => {
        const end = ends.get(batch.partition) ?? 0n;
        const msgs = batch.messages.filter((m) => BigInt(m.offset) < end);
        for (let i = 0; i < msgs.length; i += maxBatch) {
          await onBatch({
            partition: batch.partition,
            messages: msgs.slice(i, i + maxBatch).map((m) => ledgerMessage(batch.partition, m)),
            heartbeat,
          });
        }
        const last = batch.messages[batch.messages.length - 1];
        if (last) resolveOffset(last.offset);
        if (last && BigInt(last.offset) + 1n >= end) {
          pending.delete(batch.partition);
          consumer.pause([{ topic: batch.topic, partitions: [batch.partition] }]);
          if (pending.size === 0) finish();
        }
      },
    });
    try {
      await finished;
    } finally {
      await consumer.disconnect();
      const admin = await this.getAdmin();
      await admin.deleteGroups([groupId]).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.consumers].map((c) => c.disconnect()));
    this.consumers.clear();
    await this.producer.close();
    await this.admin?.disconnect().catch(() => undefined);
  }

  private async getAdmin(): Promise<Admin> {
    if (!this.admin) {
      const admin = this.kafka.admin();
      await admin.connect();
      this.admin = admin;
    }
    return this.admin;
  }
}

/** One fetched batch of a consumer's partition: applied from the graph's checkpoint, then committed. */
async function applyBatch(
  consumer: Consumer,
  opts: ConsumeOptions,
  { batch, heartbeat, isRunning, isStale, resolveOffset }: EachBatchPayload,
): Promise<void> {
  if (!isRunning() || isStale() || batch.messages.length === 0) return;
  // The checkpoint in the graph is the truth. If the broker's committed offset is ahead of it
  // (e.g. the graph was rebuilt), rewind; skipping behind it is done inside the transaction.
  const next = await opts.startAt(batch.partition);
  const first = BigInt(batch.firstOffset() ?? batch.messages[0]!.offset);
  // If it is far behind (a new group), jump ahead instead of re-reading what is applied.
  if (next !== null && (BigInt(next) < first || BigInt(next) > first + 1000n)) {
    consumer.seek({ topic: batch.topic, partition: batch.partition, offset: next });
    return;
  }
  // A heartbeat that finds this member gone is remembered: whatever onBatch then throws, KafkaJS gets
  // the membership error, which makes it rejoin at once. Any other error makes it re-fetch and retry
  // the batch for minutes as a member the group has already forgotten.
  let lost: unknown;
  const beat = async () => {
    try {
      await heartbeat();
    } catch (e) {
      if (membershipLost(e)) lost ??= e;
      throw e;
    }
  };
  try {
    await opts.onBatch({
      partition: batch.partition,
      messages: batch.messages.map((m) => ledgerMessage(batch.partition, m)),
      heartbeat: beat,
    });
  } catch (e) {
    throw lost ?? e;
  }
  const last = batch.messages[batch.messages.length - 1]!.offset;
  // Without auto-resolve, KafkaJS fetches from the last *resolved* offset: resolve, or the same
  // batch comes back forever once it fills a whole fetch.
  resolveOffset(last);
  await consumer.commitOffsets([
    { topic: batch.topic, partition: batch.partition, offset: String(BigInt(last) + 1n) },
  ]);
}

/** KafkaJS's errors that mean this member no longer owns its partitions (its runner rejoins on them). */
function membershipLost(e: unknown): boolean {
  const type = (e as { type?: unknown }).type;
  return (
    type === 'UNKNOWN_MEMBER_ID' ||
    type === 'REBALANCE_IN_PROGRESS' ||
    type === 'NOT_COORDINATOR_FOR_GROUP' ||
    type === 'ILLEGAL_GENERATION'
  );
}
