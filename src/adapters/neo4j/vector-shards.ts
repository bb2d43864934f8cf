import { dot, l2normalize } from '../../ports/embedder.ts';
import { DenseRows, denseSupported } from './dense-rows.ts';

/**
 * Nearest vectors of one request scope, held in process. Pure: the Neo4j side (which namespaces changed,
 * loading their vectors, filtering by entitlement) is ScopeVectors' (scope-vectors.ts).
 *
 * A shard holds one namespace's record vectors by model, unit-normalised so that a dot product is the
 * cosine, and the projection stamp it was read at. Ranking is by cosine, ties by id — the order
 * `vector.similarity.cosine … ORDER BY score DESC, id` gives — and one record's score never depends on
 * another's, so filtering the ranked ids afterwards keeps exactly the order the visible records have.
 */

/**
 * One record's vector as the graph holds it (embedding null: it has none, or no longer), with the record's
 * version: a record's embedding changes only with a new version (new text) or with its model, so a row
 * seen again at the version and model held needs no vector (ScopeVectors.load).
 */
export interface VectorRow {
  readonly id: string;
  readonly model: string | null;
  readonly vector: readonly number[] | null;
  readonly version?: number;
}

/**
 * One model's vectors of a shard. Row i of `dense` (or `vectors[i]`) is `ids[i]`'s; both remove by
 * swapping the last entry into the freed slot, so the indices stay one. Below DENSE_FROM vectors they are
 * JavaScript arrays (a WebAssembly memory is at least 64 KiB); from then on all of them are in `dense`.
 */
interface Entries {
  ids: string[];
  vectors: Float32Array[];
  dense: DenseRows | null;
  at: Map<string, number>;
}

/** From this many vectors a model's entries move into a DenseRows (scored by its SIMD kernel). */
export const DENSE_FROM = 128;

/** A unit copy of `v` in 32 bits; null when it has no direction. */
export function unit(v: readonly number[]): Float32Array | null {
  const u = l2normalize(Float32Array.from(v));
  return u.some((x) => x !== 0) ? u : null;
}

/**
 * The windows of a ranking that a caller checks against Neo4j in turn, [from, to): the first `first` ids,
 * then eight times as many each time, while too few of them were kept.
 */
export function* windows(first: number): Generator<{ from: number; to: number }> {
  for (let from = 0, size = first; ; from += size, size *= 8) yield { from, to: from + size };
}

export class Shard {
  private readonly byModel = new Map<string, Entries>();
  private readonly modelOf = new Map<string, string>();
  private readonly versionOf = new Map<string, number | undefined>();

  constructor(
    readonly epoch: string,
    public seq: number,
  ) {}

  get size(): number {
    return this.modelOf.size;
  }

  /** Whether the shard holds record `id`'s vector of `model` as it was at `version`. */
  holds(id: string, model: string, version: number): boolean {
    return this.modelOf.get(id) === model && this.versionOf.get(id) === version;
  }

  /** Replace each row's vector (a row without one removes the record). */
  apply(rows: readonly VectorRow[]): void {
    for (const r of rows) {
      this.remove(r.id);
      const v = r.model && r.vector ? unit(r.vector) : null;
      if (!v || !r.model) continue;
      let e = this.byModel.get(r.model);
      if (!e) this.byModel.set(r.model, (e = { ids: [], vectors: [], dense: null, at: new Map() }));
      // A model's vectors all have its dimension; one that does not cannot be compared with them.
      const dims = e.dense?.dims ?? e.vectors[0]?.length ?? v.length;
      if (v.length !== dims) continue;
      e.at.set(r.id, e.ids.length);
      e.ids.push(r.id);
      if (e.dense) e.dense.push(v);
      else e.vectors.push(v);
      this.modelOf.set(r.id, r.model);
      this.versionOf.set(r.id, r.version);
      if (!e.dense && denseSupported && e.ids.length >= DENSE_FROM) {
        e.dense = new DenseRows(dims);
        for (const x of e.vectors) e.dense.push(x);
        e.vectors = [];
      }
    }
  }

  private remove(id: string): void {
    const model = this.modelOf.get(id);
    if (model === undefined) return;
    this.modelOf.delete(id);
    this.versionOf.delete(id);
    const e = this.byModel.get(model)!;
    const i = e.at.get(id)!;
    const last = e.ids.length - 1;
    // Swap-remove: the last entry takes the freed slot.
    e.ids[i] = e.ids[last]!;
    e.at.set(e.ids[i]!, i);
    e.ids.pop();
    e.at.delete(id);
    if (e.dense) {
      e.dense.move(last, i);
      e.dense.pop();
    } else {
      e.vectors[i] = e.vectors[last]!;
      e.vectors.pop();
    }
  }

  /**
   * Every record of `model` with its cosine to the unit query `q`: the ids as they are now (a copy, since
   * a later load moves them) and their scores, index for index. Null when the shard has none of `model`.
   */
  score(model: string, q: Float32Array): Scores | null {
    const e = this.byModel.get(model);
    if (!e || e.ids.length === 0) return null;
    if (e.dense) return q.length === e.dense.dims ? { ids: e.ids.slice(), scores: e.dense.scores(q) } : null;
    const scores = new Float64Array(e.ids.length);
    for (let i = 0; i < scores.length; i++) scores[i] = dot(e.vectors[i]!, q);
    return { ids: e.ids.slice(), scores };
  }
}

interface Scores {
  readonly ids: readonly string[];
  readonly scores: Float64Array;
}

/**
 * One query's scores over the shards' records of its model. `top(n)` gives the best n ids, best first:
 * higher cosine, then the smaller id (the order `ORDER BY score DESC, id` gives). It selects them with a
 * bounded heap instead of sorting every record: a recall needs a window of tens out of thousands. The
 * scores stay in one typed array, and a record that does not beat the heap's worst costs one comparison
 * of two numbers (relate ranks its namespace for every draft: the selection was ~3 % of the server's CPU
 * in the write bench while every score went through an array of objects).
 */
export class Ranking {
  private readonly s: Scores;

  constructor(shards: readonly Shard[], model: string, query: readonly number[]) {
    const q = unit(query);
    const parts = q ? shards.flatMap((sh) => sh.score(model, q) ?? []) : [];
    this.s = parts.length === 1 ? parts[0]! : concat(parts);
  }

  get size(): number {
    return this.s.ids.length;
  }

  /** Whether record i ranks before record j. */
  private before = (i: number, j: number): boolean => {
    const { ids, scores } = this.s;
    return scores[i]! > scores[j]! || (scores[i] === scores[j] && ids[i]! < ids[j]!);
  };

  top(n: number): string[] {
    return this.best(n).map((i) => this.s.ids[i]!);
  }

  /** The best n as `top` gives them, each with its cosine to the query (in 32 bits, as it was ranked). */
  topScored(n: number): Array<{ readonly id: string; readonly cosine: number }> {
    return this.best(n).map((i) => ({ id: this.s.ids[i]!, cosine: this.s.scores[i]! }));
  }

  private best(n: number): number[] {
    const heap: number[] = []; // the best n so far; heap[0] the worst of them
    if (n <= 0) return heap;
    const { scores } = this.s;
    const worse = (a: number, b: number) => this.before(b, a);
    for (let i = 0; i < scores.length; i++) {
      if (heap.length < n) siftUp(heap, i, worse);
      // Below the worst kept: out at one comparison. Level with it: the ids decide (before).
      else if (scores[i]! >= scores[heap[0]!]! && this.before(i, heap[0]!)) replaceTop(heap, i, worse);
    }
    return heap.sort((a, b) => (this.before(a, b) ? -1 : 1));
  }
}

/** Several shards' scores as one. */
function concat(parts: readonly Scores[]): Scores {
  const scores = new Float64Array(parts.reduce((n, p) => n + p.ids.length, 0));
  let at = 0;
  for (const p of parts) {
    scores.set(p.scores, at);
    at += p.ids.length;
  }
  return { ids: parts.flatMap((p) => p.ids), scores };
}

type Worse = (a: number, b: number) => boolean;

/** Push x onto a heap whose top is its worst element. */
function siftUp(h: number[], x: number, worse: Worse): void {
  let i = h.push(x) - 1;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!worse(h[i]!, h[p]!)) return;
    [h[i], h[p]] = [h[p]!, h[i]!];
    i = p;
  }
}

/** Replace the heap's worst element by x and restore the order. */
function replaceTop(h: number[], x: number, worse: Worse): void {
  h[0] = x;
  for (let i = 0; ;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < h.length && worse(h[l]!, h[m]!)) m = l;
    if (r < h.length && worse(h[r]!, h[m]!)) m = r;
    if (m === i) return;
    [h[i], h[m]] = [h[m]!, h[i]!];
    i = m;
  }
}
