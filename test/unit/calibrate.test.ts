import { describe, expect, it } from 'vitest';
import {
  matchQuantile,
  nameEdits,
  neighbourPairs,
  pairCosines,
  properNames,
  randomPairs,
  sentenceEdits,
} from '../../src/eval/calibrate.ts';
import { prng } from '../bench/seed-records.ts';

/** src/eval/calibrate.ts: the quantile matching that carries cosine thresholds from one model to another. */

const unit = (...xs: number[]): Float32Array => {
  const n = Math.hypot(...xs);
  return Float32Array.from(xs.map((x) => x / n));
};

describe('matchQuantile', () => {
  it('a monotone rescaling of the same pairs carries the threshold to the rescaled value', () => {
    // Given reference cosines and a target model that squeezes them into [0.5, 1]
    const reference = [0.1, 0.3, 0.5, 0.7, 0.85, 0.9, 0.95, 0.97, 0.99];
    const target = reference.map((c) => 0.5 + c / 2);
    // When 0.85 is matched, Then the target threshold flags the same four pairs
    const t = matchQuantile(reference, target, 0.85);
    expect(t).toBeCloseTo(0.925, 10);
    expect(target.filter((c) => c >= t).length).toBe(reference.filter((c) => c >= 0.85).length);
  });

  it('counts flagged pairs, whatever order the target cosines come in', () => {
    const reference = [0.99, 0.2, 0.9, 0.4];
    const target = [0.6, 0.995, 0.1, 0.97];
    expect(matchQuantile(reference, target, 0.9)).toBe(0.97);
  });

  it('refuses a pair set with no pair at the threshold, and lists of different lengths', () => {
    expect(() => matchQuantile([0.1, 0.2], [0.3, 0.4], 0.97)).toThrow(/no pair reaches 0.97/);
    expect(() => matchQuantile([0.1], [0.3, 0.4], 0.1)).toThrow(RangeError);
  });
});

describe('the pair set', () => {
  it('sentence edits: three per sentence long enough, each differing from its original, the same for a seed', () => {
    const texts = ['We moved the ledger to Kafka last week.', 'Too short here.'];
    const a = sentenceEdits(texts, prng(1));
    expect(a).toHaveLength(3);
    for (const [orig, edit] of a) {
      expect(orig).toBe(texts[0]);
      expect(edit).not.toBe(orig);
    }
    expect(a[2]![1]).toBe('we moved the ledger to kafka last week');
    expect(sentenceEdits(texts, prng(1))).toEqual(a);
  });

  it('name edits: lower case, a letter dropped, a plural, an article', () => {
    const [lower, dropped, plural, article] = nameEdits(['Caroline'], prng(3)).map(([, e]) => e);
    expect(lower).toBe('caroline');
    expect(dropped).toHaveLength('Caroline'.length - 1);
    expect(plural).toBe('Carolines');
    expect(article).toBe('the Caroline');
  });

  it('proper names: capitalised runs, not the word that opens a sentence', () => {
    expect(properNames('Hey Mel! We went to New York with Caroline. Then we left.')).toEqual([
      'Mel',
      'New York',
      'Caroline',
    ]);
  });

  it('neighbour pairs are each vector with its nearest others; random pairs never pair an index with itself', () => {
    const v = [unit(1, 0), unit(0.9, 0.1), unit(0, 1), unit(0.1, 0.9)];
    expect(neighbourPairs(v, 4, 1)).toEqual([
      [0, 1],
      [1, 0],
      [2, 3],
      [3, 2],
    ]);
    expect(pairCosines(v, [[0, 2]])[0]).toBeCloseTo(0, 10);
    const r = randomPairs(3, 50, prng(5));
    expect(r).toHaveLength(50);
    expect(r.every(([i, j]) => i !== j && i < 3 && j < 3)).toBe(true);
  });
});
