import { MuninnError } from '../domain/errors.ts';

/**
 * Backpressure for the write path: refuse at once rather than queue. A write that would wait behind
 * hundreds of others, or behind a projection minutes late, is refused with RATE_LIMITED and a
 * `retryAfterMs` (retryable), before it is screened or embedded, so an overloaded process spends nothing
 * on it and its callers never sit on a connect timeout. Three signals:
 *  - writes in progress in this process (`maxInFlight`);
 *  - the projection lag of this process's own appends (`lagMs`, ProjectionAwait): the age of the oldest
 *    append the projection has not applied yet;
 *  - how busy this process's event loop was over the last moment (`busy`, 0–1), once at least
 *    `busyFloor` writes are in progress. Why: a saturated loop cannot even accept the requests it would
 *    refuse. Past the machine's rate, admitted writes used the whole loop, requests queued in the
 *    kernel's accept queue for seconds, and the refusals themselves came back 14 s late (issue #11). Below
 *    `maxBusy` the loop keeps the slack to answer everyone at once. On by default (0.9; 1 turns it off):
 *    measured with the client in a process of its own, it keeps admitted writes' lag under 2 s at twice
 *    the sustainable rate at no clear cost to that rate (README, Overload).
 */
export interface OverloadLimits {
  readonly maxInFlight: number;
  readonly maxLagMs: number;
  /** Event-loop utilisation (0–1) beyond which writes past `busyFloor` are refused; 1 turns it off. */
  readonly maxBusy: number;
  readonly busyFloor: number;
}

export class OverloadGuard {
  private inFlight = 0;

  constructor(
    private readonly limits: OverloadLimits,
    private readonly lagMs: () => number,
    private readonly busy: () => number = () => 0,
  ) {}

  /** Admits one write (returns its release) or throws RATE_LIMITED with retryAfterMs. */
  enter(): () => void {
    if (this.inFlight >= this.limits.maxInFlight) {
      throw refused(`${this.inFlight} writes in progress (limit ${this.limits.maxInFlight})`, 100, {
        inFlight: this.inFlight,
      });
    }
    const lag = this.lagMs();
    if (lag > this.limits.maxLagMs) {
      // Come back when the projection may have caught up: about the lag beyond the limit, within bounds.
      const wait = Math.min(5_000, Math.max(100, Math.round(lag - this.limits.maxLagMs)));
      throw refused(
        `the projection is ${Math.round(lag)} ms behind (limit ${this.limits.maxLagMs} ms)`,
        wait,
        {
          lagMs: Math.round(lag),
        },
      );
    }
    if (this.inFlight >= this.limits.busyFloor) {
      const busy = this.busy();
      if (busy > this.limits.maxBusy)
        throw refused(
          `the process is ${Math.round(busy * 100)} % busy with ${this.inFlight} writes in progress (limit ${Math.round(this.limits.maxBusy * 100)} %)`,
          250,
          { inFlight: this.inFlight, busyPercent: Math.round(busy * 100) },
        );
    }
    this.inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
    };
  }

  /** Runs `fn` as one admitted write. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const release = this.enter();
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

/** RATE_LIMITED for an overloaded write path, with when to come back (`retryAfterMs`). */
export function refused(why: string, retryAfterMs: number, details: Record<string, number>): MuninnError {
  return new MuninnError('RATE_LIMITED', `overloaded: ${why}; retry after ${retryAfterMs} ms`, {
    retryAfterMs,
    reason: 'overloaded',
    ...details,
  });
}
