import { describe, expect, it } from 'vitest';
import { mergedRanking, type AnchorRow } from '../../src/adapters/neo4j/anchor-orders.ts';

/**
 * The graph arm's ranking from the anchors' held orders (anchor-orders.ts), without a database: each
 * order is by hops, then confidence (desc), then id; the request keeps its namespaces; a record about
 * several anchors comes once, at its best place, naming the first anchor (caller's order) there.
 */
const row = (id: string, ns: string, hops: number, confidence: number): AnchorRow => [
  id,
  ns,
  hops,
  confidence,
];
const everywhere = () => true;

describe('mergedRanking', () => {
  it('given one anchor, when ranked, then its order is kept and only the request namespaces pass', () => {
    const list = [row('a', 'x/web', 0, 0.9), row('b', 'y/ops', 0, 0.8), row('c', 'x', 1, 0.99)];
    const r = mergedRanking([list], ['k'], (ns) => ns.startsWith('x'));
    expect(r.top(10)).toEqual([
      ['a', 'k'],
      ['c', 'k'],
    ]);
    expect(r.bound).toBe(3);
  });

  it('given two anchors, when merged, then hops first, confidence next, id last, across both', () => {
    const k = [row('k1', 'x', 0, 0.5), row('k2', 'x', 1, 0.99)];
    const o = [row('o1', 'x', 0, 0.7), row('o2', 'x', 0, 0.5)];
    expect(mergedRanking([k, o], ['kestrel', 'osprey'], everywhere).top(10)).toEqual([
      ['o1', 'osprey'],
      ['k1', 'kestrel'],
      ['o2', 'osprey'],
      ['k2', 'kestrel'],
    ]);
  });

  it('given a record about both anchors, then it comes once, at its best place, naming the anchor there', () => {
    const k = [row('shared', 'x', 1, 0.9)];
    const o = [row('shared', 'x', 0, 0.9), row('o2', 'x', 0, 0.1)];
    expect(mergedRanking([k, o], ['kestrel', 'osprey'], everywhere).top(10)).toEqual([
      ['shared', 'osprey'],
      ['o2', 'osprey'],
    ]);
    // The same place in both: the first anchor in the caller's order.
    const same = [row('shared', 'x', 0, 0.9)];
    expect(mergedRanking([same, same], ['kestrel', 'osprey'], everywhere).top(10)).toEqual([
      ['shared', 'kestrel'],
    ]);
  });

  it('given a window, when asked again for more, then the first ids are the same and the rest follow', () => {
    const list = Array.from({ length: 50 }, (_, i) =>
      row(`r${String(i).padStart(2, '0')}`, 'x', 0, 1 - i / 100),
    );
    const r = mergedRanking([list], ['k'], everywhere);
    const first = r.top(5).map(([id]) => id);
    expect(first).toEqual(['r00', 'r01', 'r02', 'r03', 'r04']);
    expect(
      r
        .top(20)
        .slice(0, 5)
        .map(([id]) => id),
    ).toEqual(first);
    expect(r.top(100)).toHaveLength(50);
  });
});
