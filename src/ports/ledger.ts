import type { LedgerEvent } from '../domain/events.ts';
import type { TraceCarrier } from './tracing.ts';

/** Where an event landed: the ledger's own coordinates. Offsets are decimal strings (64-bit safe). */
export interface LedgerPosition {
  readonly partition: number;
  readonly offset: string;
}

export interface LedgerMessage {
  readonly partition: number;
  readonly offset: string;
  readonly key: string | null;
  readonly value: Uint8Array | null;
  /** The trace context of the append that wrote it, when tracing was on (never payload data). */
  readonly trace?: TraceCarrier | undefined;
  /** More events of the same append follow this one (absent on messages written before the mark). */
  readonly continues?: boolean | undefined;
}

export interface LedgerBatch {
  readonly partition: number;
  readonly messages: readonly LedgerMessage[];
  /**
   * Let the broker know the consumer is alive during long batches. Rejects once this member has lost the
   * partition (a rebalance, or the group forgot it); `onBatch` should then give up the batch (throw), and
   * the consumer rejoins at once instead of retrying work another member now owns.
   */
  heartbeat(): Promise<void>;
}

export interface PartitionOffsets {
  readonly partition: number;
  /** The offset the next appended message will get (Kafka's high watermark). */
  readonly highWatermark: string;
  readonly low: string;
}

export interface DeadLetter {
  readonly sourcePartition: number;
  readonly sourceOffset: string;
  readonly reason: string;
  readonly retryableAfterUpgrade: boolean;
  readonly value: Uint8Array | null;
}

/**
 * The append-only ledger. Kafka is the binding today (KafkaJS); the port keeps the client swappable.
 * Events are keyed by tenant, so one tenant's events stay in order on one partition. An append carries
 * the caller's active trace context with its messages (the binding reads it itself: Kafka headers).
 */
export interface Ledger {
  /** Create the topics if absent. */
  ensureTopics(): Promise<void>;
  /** Append in order; all or nothing per call (same tenant ⇒ same partition). */
  append(events: readonly LedgerEvent[]): Promise<LedgerPosition[]>;
  /** Raw append, for tests and tooling that must put bytes no writer would. */
  appendRaw(key: string, value: string | Uint8Array): Promise<LedgerPosition>;
  deadLetter(d: DeadLetter): Promise<void>;
  offsets(): Promise<PartitionOffsets[]>;
  /**
   * Consume as a member of `groupId`. `startAt(partition)` is asked on every assignment and returns
   * the next offset to read (checkpoint + 1) or null for the beginning. Batches of one partition are
   * delivered in order by one caller at a time.
   */
  consume(opts: {
    groupId: string;
    /** How long the broker waits for a silent member before handing its partitions to another. */
    sessionTimeoutMs: number;
    startAt: (partition: number) => Promise<string | null>;
    onBatch: (batch: LedgerBatch) => Promise<void>;
  }): Promise<LedgerSubscription>;
  /** Read every partition from the beginning up to the current high watermarks (rebuild). */
  readAll(onBatch: (batch: LedgerBatch) => Promise<void>, maxBatch: number): Promise<void>;
  close(): Promise<void>;
}

export interface LedgerSubscription {
  stop(): Promise<void>;
  /** Whether this member is in its consumer group now (joined, and not crashed, stopped or rejoining). */
  joined(): boolean;
  /** Resolves or rejects when the consumer crashes for good. */
  readonly done: Promise<void>;
}

/** Read-your-writes: resolves true once the projection has applied `offset` of `partition`, false on timeout. */
export interface ProjectionAwait {
  /** `patient`: nobody in this process waits on the answer, so it may come a little later (a gentler poll). */
  waitFor(partition: number, offset: string, timeoutMs: number, patient?: boolean): Promise<boolean>;
  /** Notes an append of this process, so that `lagMs` can age it until the projection applies it. */
  appended(partition: number, offset: string): void;
  /** The age of the oldest append noted here that the projection has not applied yet (0 when none). */
  lagMs(): number;
}
