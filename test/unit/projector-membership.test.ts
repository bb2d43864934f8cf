import { afterEach, describe, expect, it, vi } from 'vitest';
import type { GraphStore } from '../../src/ports/graph.ts';
import type { Ledger, LedgerBatch } from '../../src/ports/ledger.ts';
import { silentLogger } from '../../src/ports/logger.ts';
import { Projector } from '../../src/projector/projector.ts';
import { MuninnError } from '../../src/domain/errors.ts';

/**
 * A graph transaction slower than the session timeout must not cost the projector its group membership:
 * it heartbeats while the chunk is applied, so the broker does not evict it and re-deliver the chunk.
 * Fake timers stand in for the slow transaction; the ledger and the store are minimal fakes of the ports
 * (this is the projector's own loop, not Kafka's or Neo4j's behaviour, which the int tier covers).
 */

const SESSION_MS = 10_000;

function harness(txMs: number, projection?: () => Promise<unknown>) {
  let onBatch!: (b: LedgerBatch) => Promise<void>;
  const ledger = {
    deadLetter: async () => undefined,
    consume: async (o: { onBatch: (b: LedgerBatch) => Promise<void> }) => {
      onBatch = o.onBatch;
      return { stop: async () => undefined, done: new Promise<void>(() => undefined) };
    },
  } as unknown as Ledger;
  const store = {
    checkpoints: async () => [],
    projection:
      projection ??
      (() => new Promise((resolve) => setTimeout(() => resolve({ applied: 0, skipped: 1 }), txMs))),
  } as unknown as GraphStore;
  const projector = new Projector({
    ledger,
    store,
    topic: 't',
    groupId: 'g',
    sessionTimeoutMs: SESSION_MS,
    batchMax: 100,
    logger: silentLogger,
  });
  return { projector, deliver: (b: LedgerBatch) => onBatch(b) };
}

describe('projector group membership during a slow transaction', () => {
  afterEach(() => vi.useRealTimers());

  it('heartbeats at least every fifth of the session timeout while a chunk is applied, and stops after', async () => {
    vi.useFakeTimers();
    const txMs = 3 * SESSION_MS;
    const { projector, deliver } = harness(txMs);
    await projector.start();
    const beats: number[] = [];
    const t0 = Date.now();
    const done = deliver({
      partition: 0,
      messages: [{ partition: 0, offset: '0', key: null, value: Buffer.from('not an event') }],
      heartbeat: async () => void beats.push(Date.now() - t0),
    });
    await vi.advanceTimersByTimeAsync(txMs + 1);
    await done;
    const during = beats.filter((t) => t <= txMs);
    expect(during.length).toBeGreaterThanOrEqual(txMs / (SESSION_MS / 5) - 1);
    const gaps = during.map((t, i) => t - (during[i - 1] ?? 0));
    expect(Math.max(...gaps)).toBeLessThanOrEqual(SESSION_MS / 5);
    const after = beats.length;
    await vi.advanceTimersByTimeAsync(5 * SESSION_MS);
    expect(beats.length).toBe(after); // the keep-alive ended with the chunk
  });
});

describe('projector during a database outage', () => {
  afterEach(() => vi.useRealTimers());
  const message = { partition: 0, offset: '0', key: null, value: Buffer.from('not an event') };

  /** A store whose first `failures` transactions fail with `code`, then succeed. */
  function flaky(failures: number, code: 'UNAVAILABLE') {
    let calls = 0;
    const projection = () => {
      calls++;
      return calls <= failures
        ? Promise.reject(new MuninnError(code, 'graph store down'))
        : Promise.resolve({ applied: 0, skipped: 1 });
    };
    return { projection, calls: () => calls };
  }

  it('retries a retryable failure itself, heartbeating between tries, until the store is back', async () => {
    vi.useFakeTimers();
    const store = flaky(4, 'UNAVAILABLE');
    const { projector, deliver } = harness(0, store.projection);
    await projector.start();
    let beats = 0;
    const done = deliver({ partition: 0, messages: [message], heartbeat: async () => void beats++ });
    await vi.advanceTimersByTimeAsync(60_000);
    await expect(done).resolves.toBeUndefined();
    expect(store.calls()).toBe(5);
    expect(beats).toBeGreaterThanOrEqual(4);
  });

  it('gives the batch up with the heartbeat error once the partition has moved to another member', async () => {
    vi.useFakeTimers();
    const store = flaky(100, 'UNAVAILABLE');
    const { projector, deliver } = harness(0, store.projection);
    await projector.start();
    const lost = Object.assign(new Error('The coordinator is not aware of this member'), {
      type: 'UNKNOWN_MEMBER_ID',
    });
    const done = deliver({ partition: 0, messages: [message], heartbeat: () => Promise.reject(lost) });
    const settled = expect(done).rejects.toBe(lost);
    await vi.advanceTimersByTimeAsync(60_000);
    await settled;
    expect(store.calls()).toBe(1);
  });
});
