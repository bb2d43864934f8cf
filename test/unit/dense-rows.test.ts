import { describe, expect, it } from 'vitest';
import { DenseRows, denseSupported } from '../../src/adapters/neo4j/dense-rows.ts';
import { dot } from '../../src/ports/embedder.ts';

/** The SIMD kernel's rows (src/adapters/neo4j/dense-rows.ts): pure, no database. */
const rows = (n: number, dims: number) =>
  Array.from({ length: n }, (_, i) => Float32Array.from({ length: dims }, (_, j) => Math.sin(i * 31 + j)));

describe('vectors held as rows of a WebAssembly memory', () => {
  it('is available on this runtime', () => {
    expect(denseSupported).toBe(true);
  });

  it("each row's dot product with the query, in row order, as the JavaScript loop computes it", () => {
    for (const dims of [1, 3, 4, 7, 384]) {
      const d = new DenseRows(dims);
      const vs = rows(200, dims);
      for (const v of vs) d.push(v);
      const q = Float32Array.from({ length: dims }, (_, j) => Math.cos(j));
      const got = d.scores(q);
      expect(got).toHaveLength(200);
      vs.forEach((v, i) => expect(got[i]).toBeCloseTo(dot(v, q), 4));
    }
  });

  it('a move and a pop remove a row as the shards swap-remove it; the memory grows as rows are added', () => {
    const d = new DenseRows(5);
    const vs = rows(3000, 5); // 3,000 rows of 8 floats: past the first 64 KiB page
    for (const v of vs) d.push(v);
    d.move(2999, 10);
    d.pop();
    const q = Float32Array.from([1, 2, 3, 4, 5]);
    const got = d.scores(q);
    expect(d.size).toBe(2999);
    expect(got[10]).toBeCloseTo(dot(vs[2999]!, q), 4);
    expect(got[11]).toBeCloseTo(dot(vs[11]!, q), 4);
    // A row pushed over the area an earlier call wrote its scores to is scored by its own floats.
    d.push(Float32Array.from([0, 0, 0, 0, 1]));
    expect(d.scores(q)[2999]).toBe(5);
  });
});
