import { MuninnError } from '../domain/errors.ts';
import type { Clock } from '../ports/clock.ts';

/**
 * Write budgets: token buckets per (writer, namespace) and per namespace, so a looping agent cannot flood
 * shared memory. In-process: each API instance keeps its own buckets (documented; a shared store is a
 * later step). A refused write costs nothing and earlier writes are untouched.
 */
export interface BucketSpec {
  readonly perMinute: number;
  readonly burst: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class WriteBudget {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly clock: Clock,
    private readonly perWriter: BucketSpec,
    private readonly perNamespace: BucketSpec,
  ) {}

  /** Takes `cost` tokens from both buckets, or throws RATE_LIMITED with retryAfterMs and takes nothing. */
  charge(tenant: string, writer: string, namespace: string, cost: number): void {
    const now = this.clock.now().getTime();
    const a = this.refill(`w\u0000${tenant}\u0000${writer}\u0000${namespace}`, this.perWriter, now);
    const b = this.refill(`n\u0000${tenant}\u0000${namespace}`, this.perNamespace, now);
    const waitA = this.waitMs(a, this.perWriter, cost);
    const waitB = this.waitMs(b, this.perNamespace, cost);
    const wait = Math.max(waitA, waitB);
    if (wait > 0) {
      throw new MuninnError(
        'RATE_LIMITED',
        `write budget exhausted for ${namespace}; retry after ${Math.ceil(wait)} ms`,
        {
          retryAfterMs: Math.ceil(wait),
          budget: waitA >= waitB ? 'writer' : 'namespace',
        },
      );
    }
    a.tokens -= cost;
    b.tokens -= cost;
  }

  private refill(key: string, spec: BucketSpec, now: number): Bucket {
    const b = this.buckets.get(key) ?? { tokens: spec.burst, at: now };
    b.tokens = Math.min(spec.burst, b.tokens + (Math.max(0, now - b.at) / 60_000) * spec.perMinute);
    b.at = Math.max(b.at, now);
    this.buckets.set(key, b);
    return b;
  }

  /** A write larger than the burst goes through on a full bucket and leaves it in debt. */
  private waitMs(b: Bucket, spec: BucketSpec, cost: number): number {
    const need = Math.min(cost, spec.burst);
    return b.tokens >= need ? 0 : ((need - b.tokens) / spec.perMinute) * 60_000;
  }
}
