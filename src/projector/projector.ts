import type { ProjectionStore } from '../ports/graph.ts';
import type { Ledger, LedgerMessage, LedgerSubscription } from '../ports/ledger.ts';
import { isMuninnError } from '../domain/errors.ts';
import type { Logger } from '../ports/logger.ts';
import { applyBatch, type ApplyDeps } from './apply.ts';
import { chunksOf } from './chunks.ts';
import type { Telemetry } from '../ports/telemetry.ts';
import type { ProjectionHealth, ProjectionStall } from '../ports/projection-health.ts';
import { noTracing, type Tracing } from '../ports/tracing.ts';

type ConsumeOptions = Parameters<Ledger['consume']>[0];

export type ProjectorState =
  | { readonly kind: 'idle' }
  | { readonly kind: 'running'; readonly since: Date }
  | { readonly kind: 'stopping' }
  | { readonly kind: 'stopped' }
  | { readonly kind: 'failed'; readonly error: string };

export interface ProjectorOptions {
  readonly ledger: Ledger;
  readonly store: ProjectionStore;
  readonly topic: string;
  readonly groupId: string;
  readonly sessionTimeoutMs: number;
  /** Events per graph transaction; a larger fetched batch is applied in chunks of this size. */
  readonly batchMax: number;
  readonly logger: Logger;
  /** Bytes → event, opening sealed payloads with the key store. */
  readonly decode?: ApplyDeps['decode'];
  /** Called after each committed batch (in-process waiters wake up without polling). */
  readonly onApplied?: (partition: number, offset: string) => void;
  /** Counts events set aside to the dead-letter topic (none when absent). */
  readonly telemetry?: Telemetry;
  /** Each chunk's apply continues the traces its events carry (none when absent). */
  readonly tracing?: Tracing;
  /** A partition whose batch has failed for this long is reported stalled (health, projection status). */
  readonly stallAfterMs?: number;
}

/**
 * The projector: a consumer-group member that applies each assigned partition in order, one batch at a
 * time, through `applyBatch`. Its checkpoint lives in the graph; the broker's committed offset is only a
 * hint for where to start fetching.
 */
export class Projector {
  private sub: LedgerSubscription | undefined;
  private _state: ProjectorState = { kind: 'idle' };
  private readonly failing = new Map<
    number,
    ProjectionStall & { readonly first: string; readonly lastAt: number }
  >();

  constructor(private readonly o: ProjectorOptions) {}

  get state(): ProjectorState {
    return this._state;
  }

  /**
   * Ready: consuming (state running), a member of the consumer group, and no partition stalled. A member
   * that joined and owns no partition (more replicas than partitions) is ready too: it takes over when
   * another leaves. A stalled partition (see `stalled`) makes it unready, as a crashed consumer does: it
   * is alive but cannot move that partition (e.g. a sealed event whose data key this process's key store
   * does not hold waits there, by design, until the key is there), and writes are refused meanwhile.
   */
  health(): { readonly ready: boolean; readonly checks: Record<string, string> } {
    const joined = this.sub?.joined() ?? false;
    const stalled = this.stalled();
    const checks: Record<string, string> = {
      projector: this._state.kind,
      consumerGroup: joined ? 'joined' : 'not joined',
    };
    if (stalled.length > 0) checks['projection'] = stalled.map(describeStall).join('; ');
    return { ready: this._state.kind === 'running' && joined && stalled.length === 0, checks };
  }

  /**
   * Partitions whose batch has kept failing for at least `stallAfterMs` (30 s by default), each with the
   * offsets it is stuck at and its latest error. A partition leaves the list when a batch of it commits,
   * or when no attempt has failed for a minute (it was reassigned to another member, or this one stopped).
   */
  stalled(now: number = Date.now()): ProjectionStall[] {
    const after = this.o.stallAfterMs ?? 30_000;
    return [...this.failing.values()]
      .filter((f) => now - f.since.getTime() >= after && now - f.lastAt <= Projector.STALL_FORGET_MS)
      .map(({ first: _f, lastAt: _l, ...stall }) => stall)
      .sort((a, b) => a.partition - b.partition);
  }

  /** For the projection status: running and not stalled, and the stalls. */
  projectionHealth(): ProjectionHealth {
    const stalled = this.stalled();
    return { healthy: this._state.kind === 'running' && stalled.length === 0, stalled };
  }

  private static readonly STALL_FORGET_MS = 60_000;

  private noteFailure(partition: number, chunk: readonly LedgerMessage[], e: unknown): void {
    const now = Date.now();
    const first = chunk[0]?.offset ?? '';
    const before = this.failing.get(partition);
    // The same stall while it fails on the same first event: a re-fetched batch may end further on.
    const fresh = !before || before.first !== first || now - before.lastAt > Projector.STALL_FORGET_MS;
    this.failing.set(partition, {
      partition,
      offsets: `${first}..${chunk[chunk.length - 1]?.offset ?? ''}`,
      first,
      since: fresh ? new Date(now) : before.since,
      attempts: fresh ? 1 : before.attempts + 1,
      error: e instanceof Error ? e.message : String(e),
      lastAt: now,
    });
  }

  async start(): Promise<void> {
    const log = this.o.logger.child({ component: 'projector' });
    const startAt = async (partition: number): Promise<string | null> => {
      const cp = (await this.o.store.checkpoints(this.o.topic)).find((c) => c.partition === partition);
      return cp ? String(BigInt(cp.offset) + 1n) : '0';
    };
    const deps = {
      store: this.o.store,
      topic: this.o.topic,
      deadLetter: this.o.ledger.deadLetter.bind(this.o.ledger),
      ...(this.o.decode ? { decode: this.o.decode } : {}),
    };
    await this.subscribe(log, {
      groupId: this.o.groupId,
      sessionTimeoutMs: this.o.sessionTimeoutMs,
      startAt,
      onBatch: async (batch) => {
        for (const chunk of chunksOf(batch.messages, this.o.batchMax)) {
          const t0 = performance.now();
          const res = await this.traced(batch.partition, chunk, () =>
            this.applyPatiently(
              batch.heartbeat,
              log,
              (e) => this.noteFailure(batch.partition, chunk, e),
              () => applyBatch(deps, batch.partition, chunk),
            ),
          );
          this.failing.delete(batch.partition);
          if (res.deadLettered > 0) {
            log.warn({ partition: batch.partition, deadLettered: res.deadLettered }, 'events dead-lettered');
            this.o.telemetry?.deadLettered(res.deadLettered);
          }
          log.debug(
            {
              partition: batch.partition,
              applied: res.applied,
              skipped: res.skipped,
              ms: Math.round(performance.now() - t0),
            },
            'batch applied',
          );
          if (res.lastOffset !== null) this.o.onApplied?.(batch.partition, res.lastOffset);
          await batch.heartbeat();
        }
      },
    });
    log.info({ topic: this.o.topic, group: this.o.groupId }, 'projector running');
  }

  private async subscribe(log: Logger, opts: ConsumeOptions): Promise<void> {
    const sub = await this.o.ledger.consume(opts);
    if (this._state.kind === 'stopping' || this._state.kind === 'stopped') {
      await sub.stop(); // stopped while this consumer was joining
      return;
    }
    this.sub = sub;
    this._state = { kind: 'running', since: new Date() };
    sub.done.catch((e: unknown) => void this.replace(sub, log, opts, e));
  }

  /**
   * A consumer the Kafka client gave up on (it does for "Failed to find group coordinator" while the
   * broker loads its group metadata) has stopped for good. Left so, the process lived on and never
   * projected again: liveness said 200, only readiness said 503. So it is replaced by a new member of the
   * same group, after a growing pause, until one joins or the projector is stopped; meanwhile the state
   * is `failed` (unready). The new member starts where the graph's checkpoints are.
   */
  private async replace(dead: LedgerSubscription, log: Logger, opts: ConsumeOptions, e: unknown) {
    if (this.sub !== dead || this._state.kind !== 'running') return;
    const failed = (err: unknown) =>
      (this._state = { kind: 'failed', error: err instanceof Error ? err.message : String(err) });
    log.error({ err: failed(e).error }, 'projector consumer crashed; replacing it');
    await dead.stop().catch(() => undefined);
    // A method call, not the field: the compiler would keep the narrowing from the check above.
    const stillFailed = () => this.state.kind === 'failed';
    for (let attempt = 1; stillFailed(); attempt++) {
      await new Promise((r) => setTimeout(r, Math.min(Projector.REPLACE_MAX_MS, 500 * 2 ** attempt)));
      if (!stillFailed()) return;
      try {
        await this.subscribe(log, opts);
        log.info({ attempt }, 'projector consumer replaced');
      } catch (err) {
        log.error({ err: failed(err).error, attempt }, 'projector consumer not replaced; trying again');
      }
    }
  }

  /** The longest pause between two tries to replace a crashed consumer. */
  static readonly REPLACE_MAX_MS = 30_000;

  /** The chunk's apply (retries included) as a span in the trace of each request whose events it holds. */
  private traced<T>(partition: number, chunk: readonly LedgerMessage[], work: () => Promise<T>): Promise<T> {
    const attributes = {
      'messaging.destination.name': this.o.topic,
      'messaging.destination.partition.id': String(partition),
      'messaging.batch.message_count': chunk.length,
      'muninn.offsets': `${chunk[0]?.offset ?? ''}..${chunk[chunk.length - 1]?.offset ?? ''}`,
    };
    return (this.o.tracing ?? noTracing).continuing(
      'projector apply',
      chunk.map((m) => m.trace),
      attributes,
      work,
    );
  }

  /**
   * Heartbeats while one chunk is applied. A graph transaction slower than the session timeout (a busy
   * or restarting Neo4j) would otherwise get this member evicted: the group rebalances, the chunk's work
   * is thrown away and fetched again, and every write waits for the projection meanwhile. A failed
   * heartbeat is left to the consumer (it rejoins); the chunk's own outcome decides.
   */
  private async keepingMembership<T>(heartbeat: () => Promise<void>, work: () => Promise<T>): Promise<T> {
    const every = Math.max(500, Math.floor(this.o.sessionTimeoutMs / 5));
    const timer = setInterval(() => void heartbeat().catch(() => undefined), every);
    try {
      return await work();
    } finally {
      clearInterval(timer);
    }
  }

  /**
   * A retryable failure (Neo4j restarting, a transient lock) is retried here, with backoff and a heartbeat
   * before each try, rather than thrown to the consumer: thrown, the batch is re-fetched and retried for
   * minutes while the group may evict this member, and the projection (and every awaited write) stalls
   * long after the database is back. A heartbeat that finds the partition gone ends it: the member that
   * owns it now applies the batch (the graph checkpoint makes a second apply a no-op either way).
   */
  private async applyPatiently<T>(
    heartbeat: () => Promise<void>,
    log: Logger,
    failed: (e: unknown) => void,
    work: () => Promise<T>,
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.keepingMembership(heartbeat, work);
      } catch (e) {
        failed(e);
        const running = this._state.kind === 'running';
        if (!running || !isMuninnError(e) || !e.retryable || attempt >= Projector.APPLY_ATTEMPTS) throw e;
        const waitMs = Math.min(5000, 200 * 2 ** attempt);
        log.warn({ err: e.message, attempt, waitMs }, 'batch not applied; retrying');
        await new Promise((r) => setTimeout(r, waitMs));
        await heartbeat();
      }
    }
  }

  /** Tries of one chunk before the error goes to the consumer (about ten minutes at the 5 s cap). */
  static readonly APPLY_ATTEMPTS = 120;

  async stop(): Promise<void> {
    if (!this.sub) return;
    this._state = { kind: 'stopping' };
    this.failing.clear();
    await this.sub.stop();
    this.sub = undefined;
    this._state = { kind: 'stopped' };
  }
}

const describeStall = (s: ProjectionStall): string =>
  `stalled: partition ${s.partition} at offsets ${s.offsets} since ${s.since.toISOString()} (${s.attempts} tries): ${s.error}`;
