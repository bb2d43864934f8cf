import { describe, expect, it } from 'vitest';
import { DENSE_FROM, Ranking, Shard, unit, windows } from '../../src/adapters/neo4j/vector-shards.ts';
import { dot } from '../../src/ports/embedder.ts';

/** All shards' records of `model`, best first. */
const rank = (shards: Shard[], model: string, q: number[]) => {
  const r = new Ranking(shards, model, q);
  return r.top(r.size);
};

/** The vector arm's in-process ranking (src/adapters/neo4j/vector-shards.ts): pure, no database. */
const shard = (rows: Array<[string, string | null, number[] | null]>) => {
  const s = new Shard('e1', 1);
  s.apply(rows.map(([id, model, vector]) => ({ id, model, vector })));
  return s;
};

describe('vector shards rank by cosine as the Cypher scan orders its scores', () => {
  it('nearest first by cosine, whatever the vectors length, ties by the smaller id', () => {
    const s = shard([
      ['b', 'm', [2, 0]],
      ['c', 'm', [1, 1]],
      ['a', 'm', [5, 0]],
      ['d', 'm', [0, 3]],
    ]);
    expect(rank([s], 'm', [1, 0])).toEqual(['a', 'b', 'c', 'd']);
  });

  it("only the query model's vectors are ranked", () => {
    const s = shard([
      ['a', 'm1', [1, 0]],
      ['b', 'm2', [1, 0]],
    ]);
    expect(rank([s], 'm2', [1, 0])).toEqual(['b']);
    expect(rank([s], 'm3', [1, 0])).toEqual([]);
  });

  it('a row written again replaces the vector, and one without a vector removes the record', () => {
    const s = shard([
      ['a', 'm', [1, 0]],
      ['b', 'm', [0, 1]],
      ['c', 'm', [1, 1]],
    ]);
    s.apply([
      { id: 'b', model: 'm', vector: [1, 0.01] },
      { id: 'a', model: null, vector: null },
    ]);
    expect(s.size).toBe(2);
    expect(rank([s], 'm', [1, 0])).toEqual(['b', 'c']);
    s.apply([{ id: 'c', model: 'm2', vector: [1, 0] }]);
    expect(rank([s], 'm', [1, 0])).toEqual(['b']);
    expect(rank([s], 'm2', [1, 0])).toEqual(['c']);
  });

  it('several shards rank as one list; zero vectors and a zero query rank nothing', () => {
    const a = shard([['a1', 'm', [1, 0.5]]]);
    const b = shard([
      ['b1', 'm', [1, 0]],
      ['b0', 'm', [0, 0]],
    ]);
    expect(rank([a, b], 'm', [1, 0])).toEqual(['b1', 'a1']);
    expect(b.size).toBe(1);
    expect(rank([a, b], 'm', [0, 0])).toEqual([]);
    expect(unit([3, 4])).toEqual(new Float32Array([0.6, 0.8]));
  });

  it('top(n) is the first n of the whole order, ties by id included, chosen without sorting all', () => {
    const rows: Array<[string, string, number[]]> = Array.from({ length: 50 }, (_, i) => [
      `r${String(i).padStart(2, '0')}`,
      'm',
      [1, (i % 7) / 10],
    ]);
    const r = new Ranking([shard(rows)], 'm', [1, 0]);
    const all = r.top(r.size);
    expect(all).toHaveLength(50);
    expect(all.slice(0, 8)).toEqual(['r00', 'r07', 'r14', 'r21', 'r28', 'r35', 'r42', 'r49']);
    for (const n of [0, 1, 5, 8, 13, 49, 50, 80]) expect(r.top(n)).toEqual(all.slice(0, n));
  });

  it('a ranking keeps its ids and scores when its shard changes after it was made (a load while relate waits)', () => {
    for (const n of [3, DENSE_FROM + 2]) {
      const rows: Array<[string, string, number[]]> = Array.from({ length: n }, (_, i) => [
        `r${String(i).padStart(3, '0')}`,
        'm',
        [1, i / n],
      ]);
      const s = shard(rows);
      const r = new Ranking([s], 'm', [1, 0]);
      const before = r.topScored(3);
      // The best record leaves (the last takes its slot), another comes in nearer than all of them.
      s.apply([
        { id: 'r000', model: null, vector: null },
        { id: 'new', model: 'm', vector: [1, 0] },
      ]);
      expect(r.topScored(3)).toEqual(before);
      expect(before.map((x) => x.id)).toEqual(['r000', 'r001', 'r002']);
      expect(rank([s], 'm', [1, 0]).slice(0, 2)).toEqual(['new', 'r001']);
    }
  });

  it('the windows checked against Neo4j start at `first` ids and grow eightfold, each after the last', () => {
    const seen: Array<[number, number]> = [];
    for (const { from, to } of windows(20)) {
      seen.push([from, to]);
      if (seen.length === 3) break;
    }
    expect(seen).toEqual([
      [0, 20],
      [20, 180],
      [180, 1460],
    ]);
  });

  describe(`from ${DENSE_FROM} vectors of a model (WebAssembly rows)`, () => {
    /** Deterministic pseudo-random vectors (a linear congruential generator). */
    const vectors = (n: number, dims: number, seed: number): number[][] => {
      let x = seed;
      const next = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
      return Array.from({ length: n }, () => Array.from({ length: dims }, next));
    };
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `r${String(i).padStart(3, '0')}`);
    /** The order the JavaScript loop gives: cosine of the unit copies, ties by id. */
    const reference = (rows: ReadonlyArray<[string, number[]]>, q: number[]) =>
      rows
        .map(([id, v]) => ({ id, score: dot(unit(v)!, unit(q)!) }))
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
        .map((r) => r.id);

    it('the same order as the JavaScript loop, for a shard past the size and one below it', () => {
      const q = vectors(1, 384, 7)[0]!;
      for (const n of [DENSE_FROM - 1, 300]) {
        const vs = vectors(n, 384, 11);
        const rows = ids(n).map((id, i): [string, number[]] => [id, vs[i]!]);
        const r = new Ranking([shard(rows.map(([id, v]) => [id, 'm', v]))], 'm', q);
        expect(r.top(40)).toEqual(reference(rows, q).slice(0, 40));
        expect(r.size).toBe(n);
      }
    });

    it('rows removed and replaced rank as a shard built from what remains', () => {
      const all = vectors(260, 16, 3);
      const s = shard(ids(260).map((id, i) => [id, 'm', all[i]!]));
      // Remove every third record, move every fifth to other vectors, one to another model.
      s.apply(ids(260).flatMap((id, i) => (i % 3 === 0 ? [{ id, model: null, vector: null }] : [])));
      const moved = vectors(260, 16, 5);
      s.apply(ids(260).flatMap((id, i) => (i % 5 === 1 ? [{ id, model: 'm', vector: moved[i]! }] : [])));
      s.apply([{ id: 'r002', model: 'm2', vector: [1, 0] }]);
      const kept = ids(260).flatMap((id, i): Array<[string, number[]]> =>
        id === 'r002' ? [] : i % 5 === 1 ? [[id, moved[i]!]] : i % 3 === 0 ? [] : [[id, all[i]!]],
      );
      const q = vectors(1, 16, 9)[0]!;
      const r = new Ranking([s], 'm', q);
      expect(r.size).toBe(kept.length);
      expect(r.top(r.size)).toEqual(reference(kept, q));
      expect(rank([s], 'm2', [1, 0])).toEqual(['r002']);
    });

    it("a vector of another length than its model's is not held; a query of another length ranks nothing", () => {
      const vs = vectors(DENSE_FROM, 8, 1);
      const rows = ids(DENSE_FROM).map((id, i): [string, string, number[]] => [id, 'm', vs[i]!]);
      const s = shard([...rows, ['odd', 'm', [1, 0, 0]]]);
      expect(s.size).toBe(DENSE_FROM);
      expect(new Ranking([s], 'm', [1, 0, 0]).size).toBe(0);
    });
  });
});
