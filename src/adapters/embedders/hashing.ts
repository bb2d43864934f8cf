/**
 * FALLBACK embedder: feature hashing, not a language model. It captures shared words and word pairs only
 * (no synonyms, no paraphrase), so it is for running without the ONNX model (tests, degraded mode) and is
 * labelled as such by its modelId (`hashing-v1-<dims>`): vectors from it are never comparable with a
 * real model's.
 *
 * Features: lowercase (NFKC) word unigrams (weight 1) and adjacent-word bigrams (weight 0.5), each hashed
 * with FNV-1a + murmur3 finalizer over its UTF-8 bytes to a bucket and a sign; L2-normalized.
 * Deterministic across processes and platforms. Text with no words maps to the all-zero vector.
 */
import { type Embedder, l2normalize } from '../../ports/embedder.ts';

const WORD = /[\p{L}\p{N}]+/gu;
const BIGRAM_WEIGHT = 0.5;
const utf8 = new TextEncoder();

/** FNV-1a over the UTF-8 bytes, then the murmur3 fmix32 avalanche so every output bit depends on every byte. */
export function stableHash32(s: string): number {
  let h = 0x811c9dc5;
  for (const byte of utf8.encode(s)) {
    h ^= byte;
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export function createHashingEmbedder(dimensions = 384): Embedder {
  if (!Number.isInteger(dimensions) || dimensions < 2)
    throw new RangeError('dimensions must be an integer ≥ 2');

  const add = (v: Float32Array, feature: string, weight: number): void => {
    const h = stableHash32(feature);
    // Bucket from the hash, sign from its top bit (independent enough of h mod dimensions for dims < 2^31).
    const sign = h & 0x80000000 ? -1 : 1;
    const i = (h & 0x7fffffff) % dimensions;
    v[i] = v[i]! + sign * weight;
  };

  const embedOne = (text: string): Float32Array => {
    const v = new Float32Array(dimensions);
    const words = text.normalize('NFKC').toLowerCase().match(WORD) ?? [];
    for (let i = 0; i < words.length; i++) {
      add(v, `u:${words[i]}`, 1);
      if (i > 0) add(v, `b:${words[i - 1]} ${words[i]}`, BIGRAM_WEIGHT);
    }
    return l2normalize(v);
  };

  return {
    modelId: `hashing-v1-${dimensions}`,
    dimensions,
    embed: (texts: readonly string[]): Promise<Float32Array[]> => Promise.resolve(texts.map(embedOne)),
  };
}
