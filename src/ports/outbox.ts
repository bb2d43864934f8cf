/**
 * The transcript outbox's records, as the handoff use cases need them: two kinds of immutable records, each
 * a flat set of names. What the names and bytes mean (content addresses, the manifest chain) is the
 * protocol's business (src/handoff/outbox.ts); how a record is made durable without ever replacing one is
 * the adapter's (src/adapters/files/outbox-dir.ts).
 */
export type RecordKind = 'object' | 'manifest';

export type PublishStep = 'temp-written' | 'temp-synced' | 'linked' | 'dir-synced' | 'temp-removed';
/** Test seam: throwing from `afterStep` simulates the process dying right after that step. */
export interface PublishHooks {
  afterStep?(step: PublishStep, record: RecordKind): void | Promise<void>;
}

export interface LockOptions {
  staleMs?: number;
  timeoutMs?: number;
}

export class OutboxConflictError extends Error {
  constructor(public readonly path: string) {
    super(`outbox: ${path} exists with different content`);
    this.name = 'OutboxConflictError';
  }
}

export type BoundedRead =
  { ok: true; bytes: Buffer } | { ok: false; reason: 'missing' | 'corrupt' | 'too-large' };

/** Read side (the handoff contract, verification): opens, reads and lists; never creates or changes anything. */
export interface OutboxRecords {
  /** Final names of one kind, sorted (temporaries and the lock excluded); none when there is no outbox. */
  list(kind: RecordKind): Promise<string[]>;
  /** A record's bytes; rejects when it cannot be read. */
  read(kind: RecordKind, name: string): Promise<Buffer>;
  /**
   * Memory-bounded read: a record larger than `maxBytes` is refused without reading its content; one that
   * grows while being read is 'corrupt'. Anything that is not a readable record is 'missing'.
   */
  readBounded(kind: RecordKind, name: string, maxBytes: number): Promise<BoundedRead>;
}

/** Write side (the exporter): append-only, so there is no replace and no remove. */
export interface OutboxStore extends OutboxRecords {
  /** Makes the (private) outbox if it is missing. */
  create(): Promise<void>;
  /**
   * Creates the name with these bytes if it is absent; a crash at any point leaves no name or the complete,
   * durable record. false when the name already held exactly these bytes; OutboxConflictError when it held
   * others.
   */
  publish(kind: RecordKind, name: string, bytes: Buffer, hooks?: PublishHooks): Promise<boolean>;
  /** The exclusive writer lock over the manifests; resolves to its release. */
  lock(opts?: LockOptions): Promise<() => Promise<void>>;
}
