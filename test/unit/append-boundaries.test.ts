import { describe, expect, it } from 'vitest';
import { sendSize } from '../../src/adapters/kafka/wire.ts';
import { chunksOf } from '../../src/projector/chunks.ts';
import type { LedgerMessage } from '../../src/ports/ledger.ts';

/**
 * One append (a request's events) is never split: not between two sends of the ledger's group commit,
 * not between two graph transactions of the projector. `appends` builds a queue from append sizes.
 */
const appends = (sizes: readonly number[], bytes = 10) =>
  sizes.flatMap((n, a) =>
    Array.from({ length: n }, (_, i) => ({
      key: 'tenant',
      value: 'x'.repeat(bytes),
      append: a,
      continues: i < n - 1,
    })),
  );

const appendsIn = (q: ReadonlyArray<{ append: number }>, n: number) =>
  new Set(q.slice(0, n).map((m) => m.append));

describe('sendSize: a send ends where an append ends', () => {
  it('takes every queued append when they fit', () => {
    expect(sendSize(appends([3, 2, 4]))).toBe(9);
  });

  it('over ~900 KB, stops before the append that would cross the limit, not inside it', () => {
    // 100 KB events: the 9th would pass 900 KB, and it is the 2nd of the 3rd append's 4 events.
    const q = appends([4, 3, 4], 100_000);
    const n = sendSize(q);
    expect(n).toBe(7);
    expect(q[n - 1]!.continues).toBe(false);
  });

  it('an append over the limit on its own goes out in sends of at most the limit (the broker refuses more)', () => {
    expect(sendSize(appends([12, 2], 100_000))).toBe(9);
    // Once a whole append is in the send, a long one behind it waits for the next send.
    expect(sendSize(appends([2, 12], 100_000))).toBe(2);
  });

  it('at most 5,000 messages, still on an append boundary', () => {
    const q = appends(Array.from({ length: 2_000 }, () => 3));
    const n = sendSize(q);
    expect(n).toBe(4_998);
    expect(appendsIn(q, n).size).toBe(1_666);
  });

  it('messages without the mark (appendRaw, events before it) each end their own append', () => {
    const q = Array.from({ length: 20 }, () => ({ key: 'k', value: 'x'.repeat(100_000) }));
    expect(sendSize(q)).toBe(9);
  });
});

const messages = (sizes: readonly number[]): LedgerMessage[] =>
  appends(sizes).map((m, i) => ({
    partition: 0,
    offset: String(i),
    key: m.key,
    value: null,
    continues: m.continues,
  }));

const shape = (chunks: LedgerMessage[][]) => chunks.map((c) => c.map((m) => Number(m.offset)));

describe('chunksOf: a graph transaction ends where an append ends', () => {
  it('cuts before an append that would straddle the limit', () => {
    expect(shape(chunksOf(messages([3, 3, 2]), 4))).toEqual([
      [0, 1, 2],
      [3, 4, 5],
      [6, 7],
    ]);
  });

  it('an append longer than the limit is one chunk of its own', () => {
    expect(shape(chunksOf(messages([1, 6, 1]), 4))).toEqual([[0], [1, 2, 3, 4, 5, 6], [7]]);
  });

  it('without marks, plain chunks of the limit; every message is applied once, in order', () => {
    const plain = messages([1, 1, 1, 1, 1, 1, 1]);
    expect(shape(chunksOf(plain, 3))).toEqual([[0, 1, 2], [3, 4, 5], [6]]);
    const mixed = messages([2, 5, 1, 3, 1, 4]);
    expect(chunksOf(mixed, 4).flat()).toEqual(mixed);
    for (const c of chunksOf(mixed, 4)) expect(c[c.length - 1]!.continues).toBe(false);
  });
});
