import { describe, expect, it, vi } from 'vitest';
import { ProjectionWaiter } from '../../src/adapters/projection-waiter.ts';
import { isMuninnError } from '../../src/domain/errors.ts';
import { OverloadGuard } from '../../src/ingest/overload.ts';

const refusal = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return null;
};

const NO_BUSY = { maxInFlight: 10, maxLagMs: 1000, maxBusy: 1, busyFloor: 1 };

describe('OverloadGuard', () => {
  it('admits up to maxInFlight writes at once; the next is refused RATE_LIMITED with retryAfterMs, and admitted again after a release', () => {
    const g = new OverloadGuard({ ...NO_BUSY, maxInFlight: 2 }, () => 0);
    const a = g.enter();
    g.enter();
    const e = refusal(() => g.enter());
    expect(isMuninnError(e) && e.code).toBe('RATE_LIMITED');
    expect(e).toMatchObject({ retryable: true, details: { reason: 'overloaded', inFlight: 2 } });
    expect((e as { details: { retryAfterMs: number } }).details.retryAfterMs).toBeGreaterThan(0);
    a();
    a(); // a second release of the same write counts once
    expect(() => g.enter()).not.toThrow();
    expect(refusal(() => g.enter())).not.toBeNull();
  });

  it('refuses while the projection lags beyond maxLagMs, asking to come back after about the excess (100 ms–5 s)', () => {
    let lag = 0;
    const g = new OverloadGuard({ ...NO_BUSY, maxInFlight: 10 }, () => lag);
    lag = 1500;
    expect(refusal(() => g.enter())).toMatchObject({
      code: 'RATE_LIMITED',
      details: { retryAfterMs: 500, lagMs: 1500 },
    });
    lag = 1010;
    expect(refusal(() => g.enter())).toMatchObject({ details: { retryAfterMs: 100 } });
    lag = 60_000;
    expect(refusal(() => g.enter())).toMatchObject({ details: { retryAfterMs: 5000 } });
    lag = 999;
    expect(() => g.enter()).not.toThrow();
  });

  it('refuses while the event loop is busier than maxBusy, once busyFloor writes are in progress', () => {
    let busy = 0.99;
    const g = new OverloadGuard(
      { maxInFlight: 100, maxLagMs: 1000, maxBusy: 0.9, busyFloor: 2 },
      () => 0,
      () => busy,
    );
    // Below the floor a write is admitted however busy the loop is (a lone write is never refused).
    const first = g.enter();
    g.enter();
    expect(refusal(() => g.enter())).toMatchObject({
      code: 'RATE_LIMITED',
      retryable: true,
      details: { reason: 'overloaded', inFlight: 2, busyPercent: 99, retryAfterMs: 250 },
    });
    busy = 0.85;
    const third = g.enter();
    busy = 0.99;
    first();
    third();
    expect(() => g.enter()).not.toThrow(); // one in progress again: under the floor
  });

  it('maxBusy 1 turns the busy rule off', () => {
    const g = new OverloadGuard(
      { ...NO_BUSY, busyFloor: 1 },
      () => 0,
      () => 1,
    );
    for (let i = 0; i < 5; i++) g.enter();
  });

  it('run() releases its slot when the write fails', async () => {
    const g = new OverloadGuard({ ...NO_BUSY, maxInFlight: 1 }, () => 0);
    await expect(g.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(g.run(() => Promise.resolve(7))).resolves.toBe(7);
  });
});

describe('ProjectionWaiter.lagMs', () => {
  it("ages this process's appends until a checkpoint covers them, then reads 0", async () => {
    let applied = -1;
    const read = () =>
      Promise.resolve(applied < 0 ? [] : [{ topic: 't', partition: 0, offset: String(applied) }]);
    const w = new ProjectionWaiter({ checkpoints: read, checkpointsApplied: read }, 't', 1);
    expect(w.lagMs()).toBe(0);
    w.appended(0, '5');
    w.appended(0, '6');
    await new Promise((r) => setTimeout(r, 30));
    expect(w.lagMs()).toBeGreaterThanOrEqual(20);
    applied = 5;
    await new Promise((r) => setTimeout(r, 120));
    expect(w.lagMs()).toBeGreaterThan(0); // offset 6 still waits
    w.notify(0, '6');
    expect(w.lagMs()).toBe(0);
    w.close();
  });
});

describe('ProjectionWaiter read-your-writes', () => {
  it('a checkpoint the plain read shows releases no waiter until the read under its lock has it', async () => {
    // The graph shows offset 7 while its transaction is still being applied; the locked read says 6.
    const cp = (offset: number) => [{ topic: 't', partition: 0, offset: String(offset) }];
    let whole = 6;
    let locked = 0;
    const w = new ProjectionWaiter(
      {
        checkpoints: () => Promise.resolve(cp(7)),
        checkpointsApplied: () => (locked++, Promise.resolve(cp(whole))),
      },
      't',
      1,
    );
    let done = false;
    const waiting = w.waitFor(0, '7', 2_000).then((ok) => ((done = true), ok));
    // however slow the machine: two locked reads answered 6, and the waiter is still waiting
    await vi.waitFor(() => expect(locked).toBeGreaterThan(1), { timeout: 1_500, interval: 2 });
    expect(done).toBe(false);
    whole = 7;
    await expect(waiting).resolves.toBe(true);
    // a waiter the plain read would not release costs no locked read
    const before = locked;
    void w.waitFor(0, '9', 50);
    await new Promise((r) => setTimeout(r, 80));
    expect(locked).toBe(before);
    w.close();
  });
});

describe('ProjectionWaiter read-your-writes, under load', () => {
  it('an offset is released without a locked read once a later one shows', async () => {
    let shown = 5;
    let locked = 0;
    const cp = (offset: number) => [{ topic: 't', partition: 0, offset: String(offset) }];
    const w = new ProjectionWaiter(
      {
        checkpoints: () => Promise.resolve(cp(shown++)), // moves at every poll, as under load
        checkpointsApplied: () => (locked++, Promise.resolve(cp(0))),
      },
      't',
      1,
    );
    await expect(w.waitFor(0, '6', 2_000)).resolves.toBe(true);
    expect(locked).toBe(0);
    w.close();
  });
});

describe('ProjectionWaiter polling', () => {
  /** A waiter over a checkpoint that never moves, counting its polls. */
  const counting = () => {
    const c = { polls: 0 };
    const w = new ProjectionWaiter(
      { checkpoints: () => (c.polls++, Promise.resolve([])), checkpointsApplied: () => Promise.resolve([]) },
      't',
      5,
    );
    return { c, w };
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('a patient waiter (nobody here waits on it) is polled for gently, every 50 ms, not every 5', async () => {
    const { c, w } = counting();
    void w.waitFor(0, '9', 1_000, true);
    await sleep(260);
    expect(c.polls).toBeGreaterThanOrEqual(2);
    expect(c.polls).toBeLessThanOrEqual(6);
    w.close();
  });

  it('a waiter someone waits on is polled for quickly, also when it arrives during a gentle poll', async () => {
    const { c, w } = counting();
    void w.waitFor(0, '9', 1_000, true);
    await sleep(10);
    const quick = w.waitFor(0, '9', 1_000);
    const before = c.polls;
    await sleep(150);
    expect(c.polls - before).toBeGreaterThanOrEqual(8);
    w.notify(0, '9');
    await expect(quick).resolves.toBe(true);
    const after = c.polls;
    await sleep(150);
    expect(c.polls - after).toBeLessThanOrEqual(1); // nobody waits any more: the pending poll, then none
    w.close();
  });
});
