import { describe, expect, it } from 'vitest';
import { MuninnError } from '../../src/domain/errors.ts';
import { WriteBudget, type BucketSpec } from '../../src/ingest/budget.ts';
import type { Clock } from '../../src/ports/clock.ts';

/** Write budgets: token buckets per (tenant, writer, namespace) and per (tenant, namespace), on a fake clock. */

class FakeClock implements Clock {
  private t = Date.parse('2026-03-01T12:00:00.000Z');
  now(): Date {
    return new Date(this.t);
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

/** The MuninnError a charge throws, or undefined when it goes through. */
function attempt(fn: () => void): MuninnError | undefined {
  try {
    fn();
    return undefined;
  } catch (e) {
    if (e instanceof MuninnError) return e;
    throw e;
  }
}

const retryAfter = (e: MuninnError | undefined): number => {
  const v = e?.details['retryAfterMs'];
  if (typeof v !== 'number') throw new Error(`no numeric retryAfterMs on ${JSON.stringify(e?.details)}`);
  return v;
};

// 60 per minute: one token per second.
const WRITER: BucketSpec = { perMinute: 60, burst: 5 };
const ROOMY: BucketSpec = { perMinute: 6000, burst: 1000 };

function setup(perWriter: BucketSpec = WRITER, perNamespace: BucketSpec = ROOMY) {
  const clock = new FakeClock();
  return { clock, budget: new WriteBudget(clock, perWriter, perNamespace) };
}

describe('burst, refusal and refill', () => {
  it('the burst goes through, the next write is RATE_LIMITED (retryable, retryAfterMs ≈ one token = 1000 ms)', () => {
    // Given a writer bucket of burst 5 refilling one token a second
    const { budget } = setup();
    // When the writer spends the burst without the clock moving
    for (let i = 0; i < 5; i++)
      expect(
        attempt(() => budget.charge('t', 'w', 'ns', 1)),
        `write ${i}`,
      ).toBeUndefined();
    const e = attempt(() => budget.charge('t', 'w', 'ns', 1));
    // Then the next write is refused with RATE_LIMITED, retryable, and told to wait for one token
    expect(e).toBeInstanceOf(MuninnError);
    expect(e!.code).toBe('RATE_LIMITED');
    expect(e!.retryable).toBe(true);
    expect(retryAfter(e)).toBeGreaterThan(0);
    expect(retryAfter(e)).toBeGreaterThanOrEqual(1000);
    expect(retryAfter(e)).toBeLessThanOrEqual(1001);
    expect(e!.details['budget']).toBe('writer');
  });

  it('half a token refilled → retryAfterMs ≈ the remaining half (500 ms)', () => {
    const { clock, budget } = setup();
    for (let i = 0; i < 5; i++) budget.charge('t', 'w', 'ns', 1);
    clock.advance(500);
    const e = attempt(() => budget.charge('t', 'w', 'ns', 1));
    expect(retryAfter(e)).toBeGreaterThanOrEqual(500);
    expect(retryAfter(e)).toBeLessThanOrEqual(501);
  });

  it('after advancing the clock by retryAfterMs the write succeeds', () => {
    const { clock, budget } = setup();
    for (let i = 0; i < 5; i++) budget.charge('t', 'w', 'ns', 1);
    const e = attempt(() => budget.charge('t', 'w', 'ns', 1));
    clock.advance(retryAfter(e));
    expect(attempt(() => budget.charge('t', 'w', 'ns', 1))).toBeUndefined();
  });

  it('one millisecond before retryAfterMs the write is still refused', () => {
    const { clock, budget } = setup();
    for (let i = 0; i < 5; i++) budget.charge('t', 'w', 'ns', 1);
    const e = attempt(() => budget.charge('t', 'w', 'ns', 1));
    clock.advance(retryAfter(e) - 1);
    expect(attempt(() => budget.charge('t', 'w', 'ns', 1))?.code).toBe('RATE_LIMITED');
  });

  it('a refused write takes no tokens: a smaller write that fits goes through right after it', () => {
    // Given 2 tokens left of 5
    const { budget } = setup();
    budget.charge('t', 'w', 'ns', 3);
    // When a write of 3 is refused
    expect(attempt(() => budget.charge('t', 'w', 'ns', 3))?.code).toBe('RATE_LIMITED');
    // Then the 2 tokens are still there
    expect(attempt(() => budget.charge('t', 'w', 'ns', 2))).toBeUndefined();
    expect(attempt(() => budget.charge('t', 'w', 'ns', 1))?.code).toBe('RATE_LIMITED');
  });

  it('repeated refusals do not push the retry time further out', () => {
    const { budget } = setup();
    for (let i = 0; i < 5; i++) budget.charge('t', 'w', 'ns', 1);
    const waits = Array.from({ length: 10 }, () =>
      retryAfter(attempt(() => budget.charge('t', 'w', 'ns', 1))),
    );
    expect(new Set(waits).size).toBe(1);
  });

  it('a cost larger than the burst passes on a full bucket and leaves debt (the next write waits for it)', () => {
    // Given a full bucket of 5
    const { clock, budget } = setup();
    // When a write of cost 8 arrives
    expect(attempt(() => budget.charge('t', 'w', 'ns', 8))).toBeUndefined();
    // Then the bucket is 3 in debt: one more token needs 4 s
    const e = attempt(() => budget.charge('t', 'w', 'ns', 1));
    expect(e?.code).toBe('RATE_LIMITED');
    expect(retryAfter(e)).toBeGreaterThanOrEqual(4000);
    expect(retryAfter(e)).toBeLessThanOrEqual(4001);
    clock.advance(retryAfter(e));
    expect(attempt(() => budget.charge('t', 'w', 'ns', 1))).toBeUndefined();
  });

  it('a cost larger than the burst on a partly used bucket is refused until the bucket is full again', () => {
    const { clock, budget } = setup();
    budget.charge('t', 'w', 'ns', 1);
    const e = attempt(() => budget.charge('t', 'w', 'ns', 8));
    expect(e?.code).toBe('RATE_LIMITED');
    expect(retryAfter(e)).toBeGreaterThanOrEqual(1000);
    expect(retryAfter(e)).toBeLessThanOrEqual(1001);
    clock.advance(retryAfter(e));
    expect(attempt(() => budget.charge('t', 'w', 'ns', 8))).toBeUndefined();
  });

  it('the bucket never refills beyond its burst (an hour idle still allows only the burst)', () => {
    const { clock, budget } = setup();
    clock.advance(3_600_000);
    for (let i = 0; i < 5; i++) expect(attempt(() => budget.charge('t', 'w', 'ns', 1))).toBeUndefined();
    expect(attempt(() => budget.charge('t', 'w', 'ns', 1))?.code).toBe('RATE_LIMITED');
  });
});

describe('which bucket', () => {
  it('a writer that exhausted its own bucket in ns1 can still write in ns2 (per-writer is per namespace)', () => {
    const { budget } = setup();
    for (let i = 0; i < 5; i++) budget.charge('t', 'w', 'ns1', 1);
    expect(attempt(() => budget.charge('t', 'w', 'ns1', 1))?.code).toBe('RATE_LIMITED');
    expect(attempt(() => budget.charge('t', 'w', 'ns2', 1))).toBeUndefined();
  });

  it('per-writer exhaustion does not block another writer in the same namespace (the namespace bucket has room)', () => {
    const { budget } = setup();
    for (let i = 0; i < 5; i++) budget.charge('t', 'w1', 'ns', 1);
    expect(attempt(() => budget.charge('t', 'w1', 'ns', 1))?.details['budget']).toBe('writer');
    expect(attempt(() => budget.charge('t', 'w2', 'ns', 1))).toBeUndefined();
  });

  it('different writers share the namespace bucket: once it is spent, a fresh writer is refused with budget "namespace"', () => {
    // Given roomy writer buckets and a namespace bucket of 4
    const { budget } = setup({ perMinute: 600, burst: 100 }, { perMinute: 60, burst: 4 });
    // When two writers spend 2 each
    budget.charge('t', 'w1', 'ns', 2);
    budget.charge('t', 'w2', 'ns', 2);
    // Then a third writer is refused by the namespace bucket
    const e = attempt(() => budget.charge('t', 'w3', 'ns', 1));
    expect(e?.code).toBe('RATE_LIMITED');
    expect(e?.details['budget']).toBe('namespace');
    expect(retryAfter(e)).toBeGreaterThanOrEqual(1000);
    expect(retryAfter(e)).toBeLessThanOrEqual(1001);
    // and another namespace is unaffected
    expect(attempt(() => budget.charge('t', 'w3', 'other', 1))).toBeUndefined();
  });

  it('a write refused by the namespace bucket takes nothing from the writer bucket', () => {
    // Given a slow writer bucket (one token per 10 s) and a fast namespace bucket (one per 100 ms)
    const { clock, budget } = setup({ perMinute: 6, burst: 3 }, { perMinute: 600, burst: 3 });
    budget.charge('t', 'other-writer', 'ns', 3);
    // When w is refused by the namespace bucket
    expect(attempt(() => budget.charge('t', 'w', 'ns', 1))?.details['budget']).toBe('namespace');
    // Then once the namespace bucket is full again (300 ms, far too short to refill w), w still has its burst
    clock.advance(300);
    expect(attempt(() => budget.charge('t', 'w', 'ns', 3))).toBeUndefined();
  });

  it('different tenants are independent (same writer and namespace names)', () => {
    const { budget } = setup({ perMinute: 60, burst: 3 }, { perMinute: 60, burst: 3 });
    budget.charge('t1', 'w', 'ns', 3);
    expect(attempt(() => budget.charge('t1', 'w', 'ns', 1))?.code).toBe('RATE_LIMITED');
    expect(attempt(() => budget.charge('t2', 'w', 'ns', 3))).toBeUndefined();
  });
});
