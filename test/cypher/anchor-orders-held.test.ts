import { describe, expect, it, vi } from 'vitest';
import { AnchorOrders } from '../../src/adapters/neo4j/anchor-orders.ts';
import { HeldRows, rowCount } from '../../src/adapters/neo4j/ranked-memo.ts';
import { StampSettling } from '../../src/adapters/neo4j/stamp-settling.ts';
import { recordingExecutor } from './recording-executor.ts';

/**
 * Stamps trusted as soon as read: these cases are about what is loaded and held, not when a stamp settles.
 * Its clock stands still: an order is held only if its stamps had settled when its statement started
 * (anchor-orders.ts), and with a moving clock a statement that spans a millisecond saw its stamps first
 * after that, so the order was not held (CI failed this case once that way; a clock ticking per call
 * fails it every time).
 */
const atOnce = () => new StampSettling(() => 0, 0);

/** What the graph arm's orders keep in process (anchor-orders.ts), with the Neo4j side recorded. */
const rows = [
  ['r1', 'acme', 0, 0.9],
  ['r2', 'acme', 0, 0.5],
];
const answers = {
  'recall.graphOrder': [{ stamps: [['acme', 'e1', 3]], aid: 'kestrel', ranked: rows }],
};
const stamp = { key: 't1\u0000acme', ns: 'acme', epoch: 'e1', seq: 3 };

describe('AnchorOrders', () => {
  it('an order past the budget is used as loaded, not held: read again next time', async () => {
    const db = recordingExecutor(answers);
    const orders = new AnchorOrders(db, atOnce(), 1);
    expect(await orders.of('t1', ['kestrel'], [stamp])).toEqual([rows]);
    expect(await orders.of('t1', ['kestrel'], [stamp])).toEqual([rows]);
    expect(db.sent.filter((s) => s.op === 'recall.graphOrder')).toHaveLength(2);
  });

  it('an order within the budget is read once while its stamps stand, and again when one moves', async () => {
    const db = recordingExecutor(answers);
    const orders = new AnchorOrders(db, atOnce());
    await orders.of('t1', ['kestrel'], [stamp]);
    await orders.of('t1', ['kestrel'], [stamp]);
    expect(db.sent).toHaveLength(1);
    await orders.of('t1', ['kestrel'], [{ ...stamp, seq: 4 }]);
    expect(db.sent).toHaveLength(2);
  });
});

describe('HeldRows', () => {
  it('keeps at most its budget of rows, dropping the least recently used first', () => {
    const held = new HeldRows<{ rows: number[] }>(4, rowCount);
    held.set('a', { rows: [1, 2] });
    held.set('b', { rows: [3] });
    expect(held.get('a')).toEqual({ rows: [1, 2] }); // now b is the least recently used
    held.set('c', { rows: [4, 5] });
    expect(held.get('b')).toBeUndefined();
    expect(held.get('a')).toEqual({ rows: [1, 2] });
    expect(held.get('c')).toEqual({ rows: [4, 5] });
    held.set('d', { rows: [1, 2, 3, 4, 5] }); // larger than the budget: not held, nothing dropped for it
    expect(held.get('d')).toBeUndefined();
    expect(held.get('a')).toBeDefined();
  });

  it('counts an entry at its size when set, so one that grew in place is counted anew when set again', () => {
    const held = new HeldRows<{ n: number }>(4, (v) => v.n);
    const a = { n: 2 };
    held.set('a', a);
    held.set('b', { n: 2 });
    a.n = 3; // an entity index applies a delta in place, then is set again
    held.set('a', a); // 2 + 3 > 4: the least recently used, b, goes
    expect(held.get('b')).toBeUndefined();
    expect(held.get('a')).toBe(a);
  });

  it('with idleMs, drops an entry unused that long, and keeps one used since', () => {
    vi.useFakeTimers();
    try {
      const held = new HeldRows<{ rows: number[] }>(10, rowCount, 1_000);
      held.set('a', { rows: [1] });
      held.set('b', { rows: [2] });
      vi.advanceTimersByTime(500);
      expect(held.get('a')).toBeDefined();
      vi.advanceTimersByTime(700);
      expect(held.get('b')).toBeUndefined();
      expect(held.get('a')).toBeDefined();
      vi.advanceTimersByTime(2_000);
      expect(held.get('a')).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });
});
