import type { Checkpoint, Checkpoints } from '../ports/graph.ts';
import type { ProjectionAwait } from '../ports/ledger.ts';

const MAX_OUTSTANDING = 100_000;

/**
 * Read-your-writes: resolves when the projection's checkpoint for a partition reaches an offset. One
 * shared poll of the checkpoints serves every waiter (and works when the projector is another process);
 * an in-process projector also calls `notify` so waiters wake without waiting for the next poll. The same
 * poll ages this process's appends (`appended` → `lagMs`): the write path's backpressure signal.
 */
export class ProjectionWaiter implements ProjectionAwait {
  private readonly applied = new Map<number, bigint>();
  private readonly waiters = new Set<{ partition: number; offset: bigint; resolve: (ok: boolean) => void }>();
  /** Waiters someone in this process waits on (not `patient`): while there are any, the poll is quick. */
  private urgent = 0;
  /** This process's appends not applied yet, per partition, oldest first (for lagMs). */
  private readonly outstanding = new Map<number, Array<{ offset: bigint; at: number }>>();
  private timer: NodeJS.Timeout | undefined;
  private timerEvery = 0;
  private polling = false;

  constructor(
    private readonly store: Checkpoints,
    private readonly topic: string,
    private readonly pollMs = 5,
  ) {}

  /** The projection applied `partition` up to `offset`, whole (its commit returned, or a locked read). */
  notify(partition: number, offset: string): void {
    const o = BigInt(offset);
    if ((this.applied.get(partition) ?? -1n) < o) this.applied.set(partition, o);
    this.seen(partition, o);
    this.wake();
  }

  /** The lag's bookkeeping: appends up to `o` are in the graph, whole or still being applied. */
  private seen(partition: number, o: bigint): void {
    const out = this.outstanding.get(partition);
    if (out) {
      const left = out.filter((x) => x.offset > o);
      if (left.length) this.outstanding.set(partition, left);
      else this.outstanding.delete(partition);
    }
  }

  appended(partition: number, offset: string): void {
    const o = BigInt(offset);
    if ((this.applied.get(partition) ?? -1n) >= o) return;
    const out = this.outstanding.get(partition) ?? [];
    // Bounded: under a flood only the oldest appends matter for the lag.
    if (out.length < MAX_OUTSTANDING) out.push({ offset: o, at: performance.now() });
    this.outstanding.set(partition, out);
    this.schedule();
  }

  lagMs(): number {
    const now = performance.now();
    let oldest = now;
    for (const out of this.outstanding.values()) if (out[0] && out[0].at < oldest) oldest = out[0].at;
    return now - oldest;
  }

  /**
   * True when applied, false on timeout. A `patient` waiter (the subject gate giving a turn back) is polled
   * for like the lag: a quick poll per write would cost a checkpoint read every 5 ms under load.
   */
  waitFor(partition: number, offset: string, timeoutMs: number, patient = false): Promise<boolean> {
    const target = BigInt(offset);
    if ((this.applied.get(partition) ?? -1n) >= target) return Promise.resolve(true);
    if (!patient) this.urgent++;
    return new Promise((resolve) => {
      const w = {
        partition,
        offset: target,
        resolve: (ok: boolean) => {
          if (!this.waiters.delete(w)) return;
          clearTimeout(t);
          if (!patient) this.urgent--;
          resolve(ok);
        },
      };
      const t = setTimeout(() => w.resolve(false), timeoutMs);
      this.waiters.add(w);
      this.schedule();
    });
  }

  close(): void {
    for (const w of [...this.waiters]) w.resolve(false);
    this.outstanding.clear();
    if (this.timer) clearTimeout(this.timer);
  }

  private wake(): void {
    for (const w of [...this.waiters])
      if ((this.applied.get(w.partition) ?? -1n) >= w.offset) w.resolve(true);
  }

  private schedule(): void {
    if (this.polling || (this.waiters.size === 0 && this.outstanding.size === 0)) return;
    // Waiters want the checkpoint soon; the lag of unawaited appends (and patient waiters) can be sampled
    // more gently. A waiter that arrives while a gentle poll is pending brings it forward.
    const every = this.urgent > 0 ? this.pollMs : Math.max(this.pollMs, 50);
    if (this.timer) {
      if (this.timerEvery <= every) return;
      clearTimeout(this.timer);
    }
    this.timerEvery = every;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.poll();
    }, every);
  }

  private async poll(): Promise<void> {
    this.polling = true;
    try {
      if (this.confirmFrom(await this.store.checkpoints(this.topic)))
        for (const c of await this.store.checkpointsApplied(this.topic)) this.notify(c.partition, c.offset);
    } catch {
      // The graph is briefly unreachable: waiters keep waiting until their own timeout.
    } finally {
      this.polling = false;
      this.schedule();
    }
  }

  /**
   * What a plain read of the checkpoints proves. A checkpoint can show before its transaction is applied
   * whole (Neo4j applies a commit while others read), so the offset shown ages the lag only. The offset
   * the previous poll showed is applied whole once a later one shows: the transaction that set it let go
   * of the checkpoint's lock, which the next one had to take, only once applied. Whether a waiter the
   * shown offset would release is left once the checkpoint has stood still for QUIET_MS (an in-process
   * projector has told `notify` by then): then the caller reads the checkpoints under their locks
   * (`checkpointsApplied`), once per quiet spell — the read holds the lock the projector's next
   * transaction takes first, so it is kept off the busy path.
   */
  private confirmFrom(shown: readonly Checkpoint[]): boolean {
    let confirm = false;
    const now = performance.now();
    for (const c of shown) {
      const o = BigInt(c.offset);
      this.seen(c.partition, o);
      const before = this.shownBefore.get(c.partition);
      if (before === undefined || before.offset !== o)
        this.shownBefore.set(c.partition, { offset: o, at: now });
      if (before !== undefined && before.offset < o) this.notify(c.partition, String(before.offset));
      else if (
        before?.offset === o &&
        now - before.at >= ProjectionWaiter.QUIET_MS &&
        (this.applied.get(c.partition) ?? -1n) < o
      )
        confirm ||= [...this.waiters].some((w) => w.partition === c.partition && w.offset <= o);
    }
    return confirm;
  }
  /** How long a checkpoint stands still before the waiters it would release are confirmed under its lock. */
  static readonly QUIET_MS = 20;
  /** The offset each partition's checkpoint showed at the last poll, and since when. */
  private readonly shownBefore = new Map<number, { offset: bigint; at: number }>();
}
