import { describe, expect, it } from 'vitest';
import { StampSettling } from '../../src/adapters/neo4j/stamp-settling.ts';

/** When a stamp read is trusted to number only transactions applied whole (stamp-settling.ts). */
describe('StampSettling', () => {
  const at = { t: 0 };
  const stamp = (seq: number, epoch = 'e1') => ({ key: 't1\u0000acme', epoch, seq });

  it('a stamp first seen now is complete through the number before; seen unchanged for settleMs, through itself', () => {
    at.t = 0;
    const s = new StampSettling(() => at.t, 1_000);
    expect(s.completeThrough(stamp(3))).toBe(2); // never seen
    s.seen([stamp(3)]);
    at.t = 999;
    expect(s.settled(stamp(3))).toBe(false);
    expect(s.completeThrough(stamp(3))).toBe(2);
    s.seen([stamp(3)]); // seen again unchanged: its settling still counts from the first sight
    at.t = 1_000;
    expect(s.settled(stamp(3))).toBe(true);
    expect(s.completeThrough(stamp(3))).toBe(3);
    expect(s.settled(stamp(3), 500)).toBe(false); // asked for an earlier instant
  });

  it('a new number or a new epoch starts settling anew; another key is its own', () => {
    at.t = 0;
    const s = new StampSettling(() => at.t, 1_000);
    s.seen([stamp(3), { key: 't1\u0000other', epoch: 'e1', seq: 7 }]);
    at.t = 2_000;
    s.seen([stamp(4)]);
    expect(s.settled(stamp(3))).toBe(false); // no longer the value seen
    expect(s.settled(stamp(4))).toBe(false);
    expect(s.settled({ key: 't1\u0000other', epoch: 'e1', seq: 7 })).toBe(true);
    s.seen([stamp(4, 'e2')]); // a wiped and rebuilt graph
    at.t = 2_999;
    expect(s.settled(stamp(4, 'e2'))).toBe(false);
    at.t = 3_000;
    expect(s.settled(stamp(4, 'e2'))).toBe(true);
    expect(s.settled(stamp(4))).toBe(false);
  });
});
