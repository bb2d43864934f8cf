import { describe, expect, it } from 'vitest';
import { asksWhen, hasTimeExpression, temporalRanking } from '../../src/recall/temporal.ts';
import { scoreRanked } from '../../src/eval/locomo.ts';
import { gridPoints, rerank } from '../../src/eval/locomo-weights.ts';
import { RECIPES } from '../../src/recall/recipes.ts';
import type { LocomoItem, LocomoQuestionResult } from '../../src/eval/locomo.ts';

/** One question's deep recall, as the weight search reads it. */
const deepResult = (evidence: string[], items: LocomoItem[]): LocomoQuestionResult => ({
  question: { sampleId: 's', question: 'q', category: 1, evidence },
  recipe: 'hybrid',
  ms: 0,
  tokens: 0,
  items,
});

describe('temporal cues', () => {
  it('Given questions, When asked whether they ask for a time, Then when/what year/how long ago do and others do not', () => {
    for (const q of [
      'When did Ana move?',
      'What year did they marry?',
      'How long ago was the trip?',
      'which month?',
    ])
      expect(asksWhen(q)).toBe(true);
    for (const q of ['What did Ana adopt?', 'Where does Ben live?', 'Whence did it come?', ''])
      expect(asksWhen(q)).toBe(false);
  });

  it('Given texts, When checked for a time expression, Then relative days, weekdays, months, years and spans count; "may" alone does not', () => {
    for (const t of [
      'I went there yesterday',
      'We moved last summer',
      'See you on Friday',
      'It opened in 2019',
      'two weeks ago we met',
      'in October',
    ])
      expect(hasTimeExpression(t)).toBe(true);
    for (const t of ['I may come along', 'We love pottery', 'this time it worked'])
      expect(hasTimeExpression(t)).toBe(false);
  });

  it('Given a when-question and ranked candidates, Then the temporal list keeps those with a time expression in their order, at most k; any other question gets none', () => {
    const text: Record<string, string> = {
      a: 'I adopted a dog',
      b: 'I adopted her last Friday',
      c: 'unknown record',
      d: 'in 2020 we adopted a cat',
    };
    const textOf = (id: string) => (id === 'c' ? undefined : text[id]);
    expect(temporalRanking('When did she adopt a dog?', ['a', 'b', 'c', 'd', 'b'], textOf, 10)).toEqual([
      'b',
      'd',
    ]);
    expect(temporalRanking('When did she adopt a dog?', ['a', 'b', 'c', 'd'], textOf, 1)).toEqual(['b']);
    expect(temporalRanking('What did she adopt?', ['a', 'b', 'd'], textOf, 10)).toEqual([]);
  });
});

describe('LoCoMo scoring and the weight search', () => {
  it('Given ranked cited-label sets, Then the first hit is 1-based within k and full cover needs every evidence turn', () => {
    expect(scoreRanked(['D1:1', 'D2:2'], [['D9:9'], ['D2:2'], ['D1:1']], 10)).toEqual({
      firstHit: 2,
      all: true,
    });
    expect(scoreRanked(['D1:1', 'D2:2'], [['D9:9'], ['D2:2'], ['D1:1']], 2)).toEqual({
      firstHit: 2,
      all: false,
    });
    expect(scoreRanked(['D1:1'], [['D9:9']], 10)).toEqual({ firstHit: 0, all: false });
  });

  it('Given candidates with arm ranks, When re-fused with a weight of 0 for an arm, Then that arm no longer orders them', () => {
    const r = deepResult(
      ['L'],
      [
        { labels: ['V'], arms: [{ arm: 'vector', rank: 1 }], policy: 0.1 },
        { labels: ['L'], arms: [{ arm: 'lexical', rank: 1 }], policy: 0.1 },
      ],
    );
    const base = gridPoints()[0]!;
    expect(rerank(r, { ...base, vector: 1.5 })[0]).toEqual(['V']);
    expect(rerank(r, { ...base, vector: 0.5 })[0]).toEqual(['L']);
    expect(gridPoints().every((w) => w.lexical === 1)).toBe(true);
  });

  it("Given a candidate whose subject the question names, When re-fused, Then the point's subject weight replaces the recipe's", () => {
    const w = RECIPES['hybrid']!.weights.subject;
    // both found at rank 1 by one arm of equal weight; S's recalled policy part includes the subject signal
    const r = deepResult(
      ['S'],
      [
        { labels: ['A'], arms: [{ arm: 'lexical', rank: 1 }], policy: 0.1, subject: 0 },
        { labels: ['S'], arms: [{ arm: 'context', rank: 1 }], policy: 0.1 + w, subject: 1 },
      ],
    );
    const base = { ...gridPoints()[0]!, context: 1 };
    expect(rerank(r, { ...base, subject: 0.05 })[0]).toEqual(['S']);
    expect(rerank(r, { ...base, subject: 0 })[1]).toEqual(['S']); // the tie falls back to recall order
    expect(new Set(gridPoints().map((p) => p.subject))).toContain(0);
  });
});
