/**
 * Carries the cosine thresholds of domain/similarity.ts from one embedding model to another by quantile
 * matching: a threshold keeps the share of pairs it flags. Pure; `test/bench/calibrate-thresholds.ts`
 * embeds the pairs with both models and prints the table (`npm run calibrate`).
 *
 * The pair set has to populate every range a threshold sits in, so it mixes three kinds:
 *  - edits of each text (a word dropped, a word replaced, lower case without end punctuation): the
 *    near-duplicates that decide 0.97;
 *  - each text's nearest neighbours under either model: related but different, around 0.85;
 *  - random pairs: the unrelated bulk.
 */
import { dot } from '../ports/embedder.ts';

/** A pair of indices into the text list the pairs were made from. */
export type Pair = readonly [number, number];

/** Seeded edits of each sentence of at least `minWords` words, as new texts paired with their original. */
export function sentenceEdits(
  texts: readonly string[],
  rng: () => number,
  minWords = 5,
): Array<readonly [string, string]> {
  const vocabulary = texts.flatMap((t) => t.split(/\s+/).filter(Boolean));
  const out: Array<readonly [string, string]> = [];
  for (const t of texts) {
    const w = t.split(/\s+/).filter(Boolean);
    if (w.length < minWords || vocabulary.length === 0) continue;
    const drop = Math.floor(rng() * w.length);
    out.push([t, [...w.slice(0, drop), ...w.slice(drop + 1)].join(' ')]);
    const swap = Math.floor(rng() * w.length);
    const other = vocabulary[Math.floor(rng() * vocabulary.length)]!;
    out.push([t, [...w.slice(0, swap), other, ...w.slice(swap + 1)].join(' ')]);
    out.push([t, t.toLowerCase().replace(/[.!?]+$/, '')]);
  }
  return out;
}

/** Seeded variants of each name: lower case, one letter dropped, a plural, an article. */
export function nameEdits(names: readonly string[], rng: () => number): Array<readonly [string, string]> {
  const out: Array<readonly [string, string]> = [];
  for (const n of names) {
    if (n.length < 2) continue;
    const at = 1 + Math.floor(rng() * (n.length - 1));
    out.push([n, n.toLowerCase()], [n, n.slice(0, at) + n.slice(at + 1)], [n, `${n}s`], [n, `the ${n}`]);
  }
  return out;
}

/**
 * Capitalised words and runs of them that do not open a sentence ("Caroline", "New York"): the kind of
 * string entities are named by.
 */
export function properNames(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?<![.!?]\s|^)\b([A-Z][a-z]+(?:\s[A-Z][a-z]+)*)/g)) out.push(m[1]!);
  return out;
}

/** Each of the first `n` vectors with its `k` nearest others among them (unit vectors: cosine = dot). */
export function neighbourPairs(vectors: readonly Float32Array[], n: number, k: number): Pair[] {
  const out: Pair[] = [];
  for (let i = 0; i < n; i++) {
    const scored: Array<readonly [number, number]> = [];
    for (let j = 0; j < n; j++) if (j !== i) scored.push([dot(vectors[i]!, vectors[j]!), j]);
    scored.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
    for (const [, j] of scored.slice(0, k)) out.push([i, j]);
  }
  return out;
}

/** `count` seeded pairs of distinct indices below `n`. */
export function randomPairs(n: number, count: number, rng: () => number): Pair[] {
  const out: Pair[] = [];
  while (out.length < count && n > 1) {
    const i = Math.floor(rng() * n);
    const j = Math.floor(rng() * n);
    if (i !== j) out.push([i, j]);
  }
  return out;
}

/** The cosine of every pair under one model's vectors. */
export const pairCosines = (vectors: readonly Float32Array[], pairs: readonly Pair[]): number[] =>
  pairs.map(([i, j]) => dot(vectors[i]!, vectors[j]!));

/**
 * The threshold on `target`'s cosines that flags as many pairs as `threshold` flags on `reference`'s (the
 * same pairs, in the same order): the `target` cosine ranked where the last flagged reference pair is.
 */
export function matchQuantile(
  reference: readonly number[],
  target: readonly number[],
  threshold: number,
): number {
  if (reference.length !== target.length)
    throw new RangeError('matchQuantile: the pair lists differ in length');
  const flagged = reference.filter((c) => c >= threshold).length;
  if (flagged === 0) throw new RangeError(`matchQuantile: no pair reaches ${threshold}; add closer pairs`);
  const sorted = [...target].sort((a, b) => b - a);
  return sorted[flagged - 1]!;
}
