import type { Checkpoints } from '../ports/graph.ts';
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

  notify(partition: number, offset: string): void {
    const o = BigInt(offset);
    if ((this.applied.get(partition) ?? -1n) < o) this.applied.set(partition, o);
    const out = this.outstanding.get(partition);
    if (out) {
      const left = out.filter((x) => x.offset > o);
      if (left.length) this.outstanding.set(partition, left);
      else this.outstanding.delete(partition);
    }
    this.wake();
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
      for (const c of await this.store.checkpoints(this.topic)) this.notify(c.partition, c.offset);
    } catch {
      // The graph is briefly unreachable: waiters keep waiting until their own timeout.
    } finally {
      this.polling = false;
      this.schedule();
    }
  }
}
