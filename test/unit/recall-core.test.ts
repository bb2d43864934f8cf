import { describe, expect, it } from 'vitest';
import { isMuninnError } from '../../src/domain/errors.ts';
import { RecordStatuses, type RecordClass, type RecordStatus } from '../../src/domain/model.ts';
import {
  blend,
  namespaceDistance,
  rrf,
  type CandidateFeatures,
  type RecallItem,
  type SignalBreakdown,
  type Why,
} from '../../src/recall/fuse.ts';
import { decide, filterVisible, resolvePrecedence } from '../../src/recall/precedence.ts';
import { envelopeFrame, renderEnvelope, renderItem } from '../../src/recall/envelope.ts';
import {
  bodyAt,
  dropNearDuplicates,
  estimateTokens,
  handleFor,
  recordOfHandle,
  headlineOf,
  pack,
  summaryOf,
  type PackedItem,
} from '../../src/recall/pack.ts';
import { classHints, getRecipe, RECIPES, SIGNALS, type Recipe } from '../../src/recall/recipes.ts';

/*
 * The pure core of recall: fusion, blending, precedence, visibility, near-duplicates and packing.
 * No I/O and no clock: every instant is a constant here.
 */

const NOW = '2024-06-01T00:00:00.000Z';
const day = (d: string): string => `${d}T00:00:00.000Z`;

const noSignals = Object.fromEntries(
  SIGNALS.map((s) => [s, { value: 0, weight: 0, contribution: 0 }]),
) as unknown as SignalBreakdown;

const emptyWhy: Why = {
  arms: [],
  rrf: 0,
  score: 0,
  signals: noSignals,
  anchor: null,
  provenance: { proposedBy: 'alice', changesetId: null, episodes: [] },
  confidence: 0.8,
  overrode: [],
  contestedWith: [],
};

function item(over: Partial<RecallItem> & { id: string }): RecallItem {
  return {
    namespace: 'acme/payments',
    class: 'FACT',
    status: 'ACTIVE',
    subject: 'payments-api',
    predicate: 'uses',
    object: 'postgres',
    text: 'Payments API uses Postgres.',
    confidence: 0.8,
    authority: 0.5,
    validFrom: day('2024-01-01'),
    validTo: null,
    recordedAt: day('2024-01-01'),
    approved: false,
    contradicts: [],
    source: 'alice',
    score: 0.5,
    contested: false,
    why: emptyWhy,
    ...over,
  };
}

/** mulberry32: a tiny seeded PRNG, so the property tests are reproducible. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('rrf', () => {
  it('Given arm weights, When fused, Then each hit counts weight / (k + rank) and an absent weight is 1', () => {
    const fused = rrf(
      [
        { arm: 'lexical', ids: ['a', 'b'], weight: 1 },
        { arm: 'vector', ids: ['b', 'a'], weight: 0.5 },
        { arm: 'graph', ids: ['c'] },
      ],
      60,
    );
    const score = Object.fromEntries(fused.map((f) => [f.id, f.score]));
    expect(score['a']).toBeCloseTo(1 / 61 + 0.5 / 62, 12);
    expect(score['b']).toBeCloseTo(1 / 62 + 0.5 / 61, 12);
    expect(score['c']).toBeCloseTo(1 / 61, 12);
    expect(fused.map((f) => f.id)).toEqual(['a', 'b', 'c']);
  });

  it('Given three arms, When fused with k = 60, Then scores are Σ 1/(k + rank) and ties go by id', () => {
    const fused = rrf([
      { arm: 'lexical', ids: ['a', 'b', 'c'] },
      { arm: 'vector', ids: ['b', 'a', 'd'] },
      { arm: 'graph', ids: ['c'] },
    ]);
    // a = 1/61 + 1/62, b = 1/62 + 1/61 (tie with a → id order), c = 1/63 + 1/61, d = 1/63.
    expect(fused.map((f) => f.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(fused[0]!.score).toBeCloseTo(1 / 61 + 1 / 62, 15);
    expect(fused[1]!.score).toBe(fused[0]!.score);
    expect(fused[2]!.score).toBeCloseTo(1 / 63 + 1 / 61, 15);
    expect(fused[3]!.score).toBeCloseTo(1 / 63, 15);
    expect(fused[2]!.hits).toEqual([
      { arm: 'lexical', rank: 3 },
      { arm: 'graph', rank: 1 },
    ]);
  });

  it('Given k = 1, When fused, Then the hand-computed values come out exactly', () => {
    const fused = rrf(
      [
        { arm: 'x', ids: ['p', 'q'] },
        { arm: 'y', ids: ['q'] },
      ],
      1,
    );
    // q = 1/3 + 1/2 = 5/6, p = 1/2.
    expect(fused).toEqual([
      {
        id: 'q',
        score: 1 / 2 + 1 / 3,
        hits: [
          { arm: 'x', rank: 2 },
          { arm: 'y', rank: 1 },
        ],
      },
      { id: 'p', score: 1 / 2, hits: [{ arm: 'x', rank: 1 }] },
    ]);
  });

  it('Given the same lists in any order, When fused, Then ids and scores are identical', () => {
    const rand = prng(7);
    const ids = Array.from({ length: 40 }, (_, i) => `r${i}`);
    const lists = ['lexical', 'vector', 'graph', 'scope'].map((arm) => ({
      arm,
      ids: [...ids].sort(() => rand() - 0.5).slice(0, 25),
    }));
    const a = rrf(lists).map((f) => [f.id, f.score]);
    const b = rrf([...lists].reverse()).map((f) => [f.id, f.score]);
    const c = rrf([lists[2]!, lists[0]!, lists[3]!, lists[1]!]).map((f) => [f.id, f.score]);
    expect(b).toEqual(a);
    expect(c).toEqual(a);
  });

  it('Given an id repeated within one list, When fused, Then it counts once at its best rank', () => {
    const [only] = rrf([{ arm: 'lexical', ids: ['a', 'a', 'a'] }]);
    expect(only).toEqual({ id: 'a', score: 1 / 61, hits: [{ arm: 'lexical', rank: 1 }] });
  });

  it('Given k ≤ 0 or not a number, When fused, Then it is a bad input', () => {
    for (const k of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      let err: unknown;
      try {
        rrf([{ arm: 'x', ids: ['a'] }], k);
      } catch (e) {
        err = e;
      }
      expect(isMuninnError(err) && err.code).toBe('BAD_USER_INPUT');
    }
    expect(rrf([])).toEqual([]);
  });
});

describe('recipes', () => {
  it('Given the named recipes, When read, Then hybrid runs every arm, bm25 only lexical, vector only vector', () => {
    expect(getRecipe().name).toBe('hybrid');
    expect(getRecipe('hybrid').arms).toEqual({
      lexical: true,
      context: true,
      vector: true,
      graph: true,
      scope: true,
      temporal: true,
    });
    expect(getRecipe('bm25').arms).toEqual({
      lexical: true,
      context: false,
      vector: false,
      graph: false,
      scope: false,
      temporal: false,
    });
    expect(getRecipe('vector').arms).toEqual({
      lexical: false,
      context: false,
      vector: true,
      graph: false,
      scope: false,
      temporal: false,
    });
    for (const r of Object.values(RECIPES)) {
      expect(r.rrfK).toBeGreaterThan(0);
      expect(Object.keys(r.weights).sort()).toEqual([...SIGNALS].sort());
      expect(Object.isFrozen(r) && Object.isFrozen(r.weights)).toBe(true);
    }
  });

  it('Given an unknown name (also an Object.prototype key), When looked up, Then BAD_USER_INPUT', () => {
    for (const name of ['nope', 'toString', '__proto__', 'constructor', '']) {
      let err: unknown;
      try {
        getRecipe(name);
      } catch (e) {
        err = e;
      }
      expect(isMuninnError(err) && err.code).toBe('BAD_USER_INPUT');
    }
  });

  it('Given query wording, When hinted, Then the intended classes go up', () => {
    expect(classHints('How should I rotate the API keys?')).toMatchObject({
      PROCEDURE: 0.3,
      CONSTRAINT: 0.3,
    });
    expect(classHints('how do I deploy payments-api')).toMatchObject({ PROCEDURE: 0.3, CONSTRAINT: 0.3 });
    expect(classHints('What is the payments database?')).toEqual({ FACT: 0.3 });
    expect(classHints('who is on call this week')).toEqual({ FACT: 0.3 });
    expect(classHints('Why did we pick Kafka over RabbitMQ?')).toEqual({ DECISION: 0.3 });
    expect(classHints('payments-api postgres')).toEqual({});
    expect(classHints('')).toEqual({});
  });
});

describe('namespaceDistance', () => {
  it('Given two paths, When measured, Then it counts steps through the common ancestor', () => {
    expect(namespaceDistance('acme/payments', 'acme/payments')).toBe(0);
    expect(namespaceDistance('acme', 'acme/payments')).toBe(1);
    expect(namespaceDistance('acme', 'acme/payments/api')).toBe(2);
    expect(namespaceDistance('acme/payments/api', 'acme/payments')).toBe(1);
    expect(namespaceDistance('acme/billing', 'acme/payments')).toBe(2);
    expect(namespaceDistance('other', 'acme')).toBe(2);
  });
});

describe('blend', () => {
  const features = (over: Partial<CandidateFeatures> = {}): CandidateFeatures => ({
    namespaceDistance: 0,
    authority: 0.5,
    confidence: 0.5,
    validFrom: day('2024-05-01'),
    recordedAt: day('2024-05-01'),
    class: 'FACT',
    utility: 0,
    subjectNamed: false,
    ...over,
  });
  const withWeights = (r: Recipe, w: Partial<Recipe['weights']>): Recipe => ({
    ...r,
    weights: { ...r.weights, ...w },
  });

  // a is the best lexical match (rank 1), b the more confident statement (rank 10); ranks 2–9 were
  // filtered out (no features).
  const fused = rrf([{ arm: 'lexical', ids: ['a', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7', 'x8', 'x9', 'b'] }]);
  const feats = new Map([
    ['a', features({ confidence: 0.5 })],
    ['b', features({ confidence: 0.9 })],
  ]);

  it('Given a recipe, When blended, Then each signal shows value × weight and they sum to the score', () => {
    const [top] = blend(fused, feats, getRecipe('bm25'), NOW);
    expect(top!.id).toBe('a');
    expect(top!.signals.rrf.value).toBeCloseTo(1, 12); // rank 1 in the only enabled arm
    expect(top!.signals.confidence).toEqual({ value: 0.5, weight: 0.08, contribution: 0.5 * 0.08 });
    const sum = SIGNALS.reduce((s, k) => s + top!.signals[k].contribution, 0);
    expect(top!.score).toBeCloseTo(sum, 12);
    expect(top!.hits).toEqual([{ arm: 'lexical', rank: 1 }]);
  });

  it('Given a query naming the subject of a lower-ranked item, When blended, Then the subject signal counts only for it', () => {
    const hybrid = getRecipe('hybrid');
    const two = rrf([{ arm: 'lexical', ids: ['a', 'b'] }]);
    const named = new Map([
      ['a', features()],
      ['b', features({ subjectNamed: true })],
    ]);
    const [a, b] = ['a', 'b'].map((id) => blend(two, named, hybrid, NOW).find((x) => x.id === id)!);
    expect(a!.signals.subject).toEqual({ value: 0, weight: hybrid.weights.subject, contribution: 0 });
    expect(b!.signals.subject.value).toBe(1);
    expect(b!.signals.subject.contribution).toBeCloseTo(hybrid.weights.subject, 12);
    expect(hybrid.weights.subject).toBeGreaterThan(0);
    // with the weight at 0 the named item gains nothing
    const off = withWeights(hybrid, { subject: 0 });
    const again = blend(two, named, off, NOW).find((x) => x.id === 'b')!;
    expect(again.score).toBeCloseTo(b!.score - hybrid.weights.subject, 12);
  });

  it('Given a recipe that weighs confidence more, When blended, Then the confident item moves up', () => {
    const bm25 = getRecipe('bm25');
    expect(blend(fused, feats, bm25, NOW).map((b) => b.id)).toEqual(['a', 'b']);
    const trusting = withWeights(bm25, { confidence: 1 });
    expect(blend(fused, feats, trusting, NOW).map((b) => b.id)).toEqual(['b', 'a']);
    const relevanceOnly = withWeights(trusting, { confidence: 0 });
    expect(blend(fused, feats, relevanceOnly, NOW).map((b) => b.id)).toEqual(['a', 'b']);
  });

  it('Given equal relevance, When blended, Then scope proximity, recency and utility order as weighted', () => {
    const tie = rrf([
      { arm: 'lexical', ids: ['near', 'far'] },
      { arm: 'vector', ids: ['far', 'near'] },
    ]);
    const recipe = getRecipe('hybrid');
    const scope = new Map([
      ['near', features({ namespaceDistance: 0 })],
      ['far', features({ namespaceDistance: 3 })],
    ]);
    expect(blend(tie, scope, recipe, NOW).map((b) => b.id)).toEqual(['near', 'far']);
    expect(blend(tie, scope, withWeights(recipe, { scopeProximity: 0 }), NOW).map((b) => b.id)).toEqual([
      'far',
      'near',
    ]); // without the signal, the id breaks the tie

    const time = new Map([
      ['near', features({ validFrom: day('2020-01-01'), recordedAt: day('2020-01-01') })],
      ['far', features({ validFrom: day('2024-05-30'), recordedAt: day('2024-05-30') })],
    ]);
    const [fresh, stale] = blend(tie, time, recipe, NOW);
    expect(fresh!.id).toBe('far');
    expect(fresh!.signals.recency.value).toBeCloseTo(Math.pow(0.5, 2 / 180), 12);
    expect(stale!.signals.recency.value).toBeLessThan(0.01);

    const useful = new Map([
      ['near', features({ utility: -1 })],
      ['far', features({ utility: 1 })],
    ]);
    expect(blend(tie, useful, recipe, NOW).map((b) => b.id)).toEqual(['far', 'near']);
  });

  it('Given a "how do I" query, When hinted classes are blended, Then the procedure beats the fact', () => {
    const tie = rrf([
      { arm: 'lexical', ids: ['fact', 'proc'] },
      { arm: 'vector', ids: ['proc', 'fact'] },
    ]);
    const f = new Map([
      ['fact', features({ class: 'FACT' })],
      ['proc', features({ class: 'PROCEDURE' })],
    ]);
    const recipe = withWeights(getRecipe('hybrid'), {});
    const plain = { ...recipe, classPriority: {} };
    expect(blend(tie, f, plain, NOW).map((b) => b.id)).toEqual(['fact', 'proc']);
    expect(blend(tie, f, plain, NOW, classHints('how do I release?')).map((b) => b.id)).toEqual([
      'proc',
      'fact',
    ]);
  });

  it('Given a candidate without features, When blended, Then it is not ranked (filter before rank)', () => {
    const out = blend(fused, new Map([['b', features()]]), getRecipe('bm25'), NOW);
    expect(out.map((b) => b.id)).toEqual(['b']);
    expect(out[0]!.hits).toEqual([{ arm: 'lexical', rank: 10 }]);
  });

  it('Given nonsense numbers and times, When blended, Then values stay in range and nothing throws', () => {
    const weird = new Map([
      [
        'a',
        features({
          namespaceDistance: Number.NaN,
          authority: 7,
          confidence: -3,
          utility: Number.NaN,
          validFrom: 'soon',
          recordedAt: 'later',
        }),
      ],
    ]);
    const [b] = blend(fused, weird, getRecipe('hybrid'), 'not a time');
    expect(b!.signals.authority.value).toBe(1);
    expect(b!.signals.confidence.value).toBe(0);
    expect(b!.signals.utility.value).toBe(0);
    expect(b!.signals.recency.value).toBe(0);
    expect(b!.signals.scopeProximity.value).toBe(0);
    expect(Number.isFinite(b!.score)).toBe(true);
  });
});

describe('precedence', () => {
  const ids = (xs: readonly RecallItem[]): string[] => xs.map((x) => x.id);

  it('Given a project-level and an org-level statement, When resolved, Then the narrower scope wins', () => {
    const out = resolvePrecedence([
      item({ id: 'org', namespace: 'acme', object: 'mysql', authority: 0.95, score: 0.9 }),
      item({ id: 'proj', namespace: 'acme/payments', object: 'postgres', score: 0.5 }),
    ]);
    expect(ids(out)).toEqual(['proj']);
    expect(out[0]!.why.overrode).toEqual([{ id: 'org', rule: 'narrower-scope' }]);
    expect(out[0]!.contested).toBe(false);
  });

  it('Given the same scope, When an authoritative reference meets an agent claim, Then authority wins', () => {
    const out = resolvePrecedence([
      item({ id: 'claim', object: 'mysql', authority: 0.4, validFrom: day('2024-05-01'), score: 0.9 }),
      item({ id: 'ref', object: 'postgres', authority: 0.9, validFrom: day('2023-01-01'), score: 0.2 }),
    ]);
    expect(ids(out)).toEqual(['ref']);
    expect(out[0]!.why.overrode).toEqual([{ id: 'claim', rule: 'authority' }]);
  });

  it('Given sibling namespaces, When resolved, Then scope does not order them and the next rule decides', () => {
    const out = resolvePrecedence([
      item({ id: 'billing', namespace: 'acme/billing', object: 'mysql', authority: 0.95 }),
      item({ id: 'payments', namespace: 'acme/payments/api', object: 'postgres', authority: 0.1 }),
    ]);
    expect(ids(out)).toEqual(['billing']);
    expect(out[0]!.why.overrode).toEqual([{ id: 'payments', rule: 'authority' }]);
  });

  it('Given equal scope and authority, When resolved, Then the later valid statement wins', () => {
    const out = resolvePrecedence([
      item({ id: 'old', object: 'mysql', validFrom: day('2022-01-01'), score: 0.9 }),
      item({ id: 'new', object: 'postgres', validFrom: day('2024-03-01'), score: 0.1 }),
    ]);
    expect(ids(out)).toEqual(['new']);
    expect(out[0]!.why.overrode).toEqual([{ id: 'old', rule: 'later-valid' }]);
  });

  it('Given no rule decides, When resolved, Then both stay, contested, each naming the other', () => {
    const out = resolvePrecedence([
      item({ id: 'x', object: 'mysql', score: 0.7 }),
      item({ id: 'y', object: 'postgres', score: 0.6 }),
    ]);
    expect(ids(out)).toEqual(['x', 'y']);
    expect(out.map((o) => o.contested)).toEqual([true, true]);
    expect(out[0]!.why.contestedWith).toEqual(['y']);
    expect(out[1]!.why.contestedWith).toEqual(['x']);
  });

  it('Given a CONTRADICTS link between different subjects, When resolved, Then it is a conflict', () => {
    const out = resolvePrecedence([
      item({ id: 'a', subject: 'deploys', predicate: 'allowed on', object: 'fridays', contradicts: ['b'] }),
      item({
        id: 'b',
        subject: 'friday',
        predicate: 'is',
        object: 'a freeze day',
        validFrom: day('2024-02-01'),
      }),
    ]);
    expect(ids(out)).toEqual(['b']);
    expect(out[0]!.why.overrode).toEqual([{ id: 'a', rule: 'later-valid' }]);
  });

  it('Given multi-valued predicates, episodic classes or the same object, When resolved, Then nothing conflicts', () => {
    const out = resolvePrecedence([
      item({ id: 'l1', subject: 'Alice', predicate: 'likes', object: 'tea' }),
      item({ id: 'l2', subject: 'alice', predicate: 'Likes', object: 'jazz', validFrom: day('2024-02-01') }),
      item({ id: 'o1', class: 'OBSERVATION', subject: 'Bob', predicate: 'is at', object: 'home' }),
      item({ id: 'o2', class: 'OBSERVATION', subject: 'Bob', predicate: 'is at', object: 'work' }),
      item({ id: 's1', object: 'Postgres' }),
      item({ id: 's2', object: '  postgres ' }),
    ]);
    expect(ids(out).sort()).toEqual(['l1', 'l2', 'o1', 'o2', 's1', 's2']);
    expect(out.every((o) => !o.contested)).toBe(true);
  });

  it('Given a chain A beats B beats C, When resolved, Then only A stays and names B', () => {
    const out = resolvePrecedence([
      item({ id: 'A', object: 'v3', validFrom: day('2024-03-01'), score: 0.9 }),
      item({ id: 'B', object: 'v2', validFrom: day('2024-02-01'), score: 0.8 }),
      item({ id: 'C', object: 'v1', validFrom: day('2024-01-01'), score: 0.7 }),
    ]);
    expect(ids(out)).toEqual(['A']);
    expect(out[0]!.why.overrode.map((o) => o.id).sort()).toEqual(['B', 'C']);
  });

  it('Given a cycle of wins, When resolved, Then its highest-ranked member stays', () => {
    // A ⊂ B's scope (A wins); B authoritative vs C (B wins); C later than A, unrelated scopes (C wins).
    const out = resolvePrecedence([
      item({
        id: 'A',
        namespace: 'x/y',
        object: '1',
        authority: 0.5,
        validFrom: day('2024-01-01'),
        score: 0.9,
      }),
      item({
        id: 'B',
        namespace: 'x',
        object: '2',
        authority: 0.95,
        validFrom: day('2024-01-01'),
        score: 0.8,
      }),
      item({
        id: 'C',
        namespace: 'z',
        object: '3',
        authority: 0.5,
        validFrom: day('2024-05-01'),
        score: 0.7,
      }),
    ]);
    expect(ids(out)).toEqual(['A']);
    expect(out[0]!.why.overrode).toEqual([{ id: 'B', rule: 'narrower-scope' }]);
  });

  it('Given a record stored as CONTESTED and a repeated id, When resolved, Then it stays marked, once', () => {
    const out = resolvePrecedence([
      item({ id: 'c', status: 'CONTESTED', score: 0.4 }),
      item({ id: 'c', status: 'CONTESTED', score: 0.3 }),
      item({ id: 'd', subject: 'other', score: 0.9 }),
    ]);
    expect(ids(out)).toEqual(['d', 'c']);
    expect(out[1]!.contested).toBe(true);
    expect(out[1]!.score).toBe(0.4);
  });
});

describe('precedence (property)', () => {
  it('Across 200 random conflict sets: no survivor is beaten by another, undecided pairs are contested', () => {
    const rand = prng(99);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    for (let round = 0; round < 200; round++) {
      const items = Array.from({ length: 1 + Math.floor(rand() * 12) }, (_, i) =>
        item({
          id: `p${i}`,
          namespace: pick(['acme', 'acme/payments', 'acme/payments/api', 'acme/billing']),
          subject: pick(['db', 'queue']),
          object: pick(['a', 'b', 'c']),
          authority: pick([0.3, 0.95]),
          validFrom: day(pick(['2024-01-01', '2024-02-01', '2024-03-01'])),
          score: Math.floor(rand() * 5) / 5,
        }),
      );
      const out = resolvePrecedence(items);
      expect(out.length).toBeGreaterThan(0);
      for (const a of out) {
        for (const b of out) {
          if (a === b || a.subject !== b.subject || a.object === b.object) continue;
          expect(decide(a, b).winner).toBeNull();
          expect(a.contested && a.why.contestedWith.includes(b.id)).toBe(true);
        }
      }
      const overridden = out.flatMap((o) => o.why.overrode.map((x) => x.id));
      for (const id of overridden) expect(out.map((o) => o.id)).not.toContain(id);
    }
  });
});

describe('filterVisible', () => {
  const at = day('2024-06-01');
  const all = [
    ...RecordStatuses.map((status) => item({ id: status, status })),
    item({ id: 'future', validFrom: day('2024-06-02') }),
    item({ id: 'expired', validTo: day('2024-06-01') }),
    item({ id: 'ends-later', validTo: '2024-06-01T00:00:00.001Z' }),
    item({ id: 'starts-now', validFrom: at }),
  ];

  it('Given every status and validity, When filtered now, Then only ACTIVE and CONTESTED valid at T remain', () => {
    const ids = filterVisible(all, { validAt: at }).map((i) => i.id);
    expect(ids).toEqual(['ACTIVE', 'CONTESTED', 'ends-later', 'starts-now']);
  });

  it('Given includeHistory, When filtered, Then superseded, retracted, archived and out-of-validity come back', () => {
    const ids = filterVisible(all, { validAt: at, includeHistory: true }).map((i) => i.id);
    expect(ids).toEqual([
      'ACTIVE',
      'CONTESTED',
      'SUPERSEDED',
      'RETRACTED',
      'ARCHIVED',
      'future',
      'expired',
      'ends-later',
      'starts-now',
    ]);
    for (const hidden of ['CANDIDATE', 'REJECTED', 'ERASED'] as RecordStatus[])
      expect(ids).not.toContain(hidden);
  });

  it('Given an unparsable time, When filtered, Then nothing is shown (fail closed)', () => {
    expect(filterVisible(all, { validAt: 'yesterday-ish' })).toEqual([]);
    expect(filterVisible([item({ id: 'x', validFrom: 'garbage' })], { validAt: at })).toEqual([]);
  });
});

describe('dropNearDuplicates', () => {
  const vec: Record<string, number[]> = {
    a: [1, 0, 0],
    b: [0.99, 0.1, 0], // ≈ a
    c: [0, 1, 0],
    d: [0, 0.98, 0.2], // ≈ c
    e: [0, 0, 1],
  };
  const cos = (x: RecallItem, y: RecallItem): number | null => {
    const u = vec[x.id];
    const v = vec[y.id];
    if (!u || !v) return null;
    const dot = u.reduce((s, ui, i) => s + ui * v[i]!, 0);
    return dot / (Math.hypot(...u) * Math.hypot(...v));
  };

  it('Given near-duplicates, When dropped, Then the higher-scored of each stays', () => {
    const items = [
      item({ id: 'a', score: 0.2 }),
      item({ id: 'b', score: 0.9 }),
      item({ id: 'c', score: 0.8 }),
      item({ id: 'd', score: 0.1 }),
      item({ id: 'e', score: 0.5 }),
      item({ id: 'novec', score: 0.3 }),
      item({ id: 'novec', score: 0.05 }),
    ];
    const kept = dropNearDuplicates(items, cos, getRecipe().nearDuplicateCosine).map((i) => i.id);
    expect(kept).toEqual(['b', 'c', 'e', 'novec']);
    expect(dropNearDuplicates(items, cos, 1.01).map((i) => i.id)).toEqual(['b', 'c', 'e', 'novec', 'a', 'd']);
  });
});

describe('pack', () => {
  const long = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} explains one more detail.`).join(
    ' ',
  );

  it('estimates tokens conservatively and never under-counts a whole by its parts', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('1234')).toBe(4);
    expect(estimateTokens('😀')).toBe(3);
    expect(estimateTokens('The quick brown fox jumps over the lazy dog.')).toBeGreaterThanOrEqual(10);
    const rand = prng(3);
    const alphabet = 'ab cd\nE.1<>`~é中😀\u202e';
    const chars = Array.from(alphabet);
    const str = (): string =>
      Array.from({ length: Math.floor(rand() * 40) }, () => chars[Math.floor(rand() * chars.length)]!).join(
        '',
      );
    for (let i = 0; i < 500; i++) {
      const a = str();
      const b = str();
      expect(estimateTokens(a + b)).toBeLessThanOrEqual(estimateTokens(a) + estimateTokens(b));
    }
  });

  it('Given headlines and summaries, When derived, Then they respect 100 and 300 characters', () => {
    expect(headlineOf(item({ id: 'x' }))).toBe('payments-api — uses — postgres');
    expect(headlineOf({ subject: '', predicate: '', object: '', text: 'First one. Second one.' })).toBe(
      'First one.',
    );
    const h = headlineOf(item({ id: 'x', object: 'y'.repeat(500) }));
    expect(h.length).toBeLessThanOrEqual(100);
    expect(h.endsWith('…')).toBe(true);
    const s = summaryOf(long);
    expect(s.length).toBeLessThanOrEqual(300);
    expect(s.startsWith('Sentence number 0 explains')).toBe(true);
    expect(s.endsWith('.')).toBe(true);
    expect(summaryOf('z'.repeat(1000)).length).toBeLessThanOrEqual(300);
    expect(bodyAt(item({ id: 'x', text: long }), 'full')).toBe(long);
  });

  it('Given shrinking budgets, When packed, Then one item goes full → summary → headline → nothing', () => {
    const it1 = item({ id: 'r1', text: long, score: 1 });
    const opts = { recallId: 'rc-1' };
    const frame = envelopeFrame(opts);
    const frameCost = estimateTokens(frame.memoryOpen) + estimateTokens(frame.memoryClose);
    const cost = (level: 'full' | 'summary' | 'headline'): number =>
      frameCost +
      estimateTokens(
        renderItem(
          {
            handle: handleFor('rc-1', 'r1'),
            class: 'FACT',
            status: 'ACTIVE',
            confidence: 0.8,
            validFrom: it1.validFrom,
            validTo: null,
            source: 'alice',
            approved: false,
            contested: false,
            level,
            body: bodyAt(it1, level),
          },
          1,
        ),
      );
    const [full, summary, headline] = [cost('full'), cost('summary'), cost('headline')];
    expect(full).toBeGreaterThan(summary);
    expect(summary).toBeGreaterThan(headline);
    const level = (budget: number): string | undefined => pack([it1], budget, opts).items[0]?.level;
    expect(level(full)).toBe('full');
    expect(level(full - 1)).toBe('summary');
    expect(level(summary)).toBe('summary');
    expect(level(summary - 1)).toBe('headline');
    expect(level(headline)).toBe('headline');
    expect(level(headline - 1)).toBeUndefined();
    const p = pack([it1], full, opts);
    expect(p.tokens).toBeLessThanOrEqual(full); // the whole never costs more than its parts
    expect(p.items[0]!.body).toBe(long);
  });

  it('Given a budget smaller than the smallest headline, When packed, Then the pack is empty and renders nothing', () => {
    const items = [item({ id: 'a', score: 0.9 }), item({ id: 'b', score: 0.1 })];
    for (const budget of [0, 5, 20, -3, Number.NaN]) {
      const p = pack(items, budget, { recallId: 'r' });
      expect(p.items).toEqual([]);
      expect(p.tokens).toBe(0);
      expect(p.omitted).toEqual(['a', 'b']);
      expect(renderEnvelope(p.items, { recallId: 'r' })).toBe('');
    }
  });

  it('Given an item that does not fit even as a headline, When packed, Then the pack stops there', () => {
    const items = [
      item({ id: 'a', score: 0.9, text: 'A.' }),
      item({ id: 'b', score: 0.8, subject: 'S'.repeat(200), text: 'B.' }),
      item({ id: 'c', score: 0.7, subject: 'c', predicate: 'd', object: 'e', text: 'C.' }),
    ];
    const one = pack(items.slice(0, 1), 1000, { recallId: 'r' }).tokens;
    const p = pack(items, one + 40, { recallId: 'r' });
    expect(p.items.map((i) => i.id)).toEqual(['a']);
    expect(p.omitted).toEqual(['b', 'c']);
  });

  it('Given the same recall and record, When packed twice, Then the handle is the same; another recall, another handle', () => {
    const items = [item({ id: 'a', score: 0.9 }), item({ id: 'b', score: 0.1 })];
    const h1 = pack(items, 10_000, { recallId: 'r1' }).items.map((i) => i.handle);
    const h2 = pack([...items].reverse(), 10_000, { recallId: 'r1' }).items.map((i) => i.handle);
    const h3 = pack(items, 10_000, { recallId: 'r2' }).items.map((i) => i.handle);
    expect(h1).toEqual(h2);
    expect(h1).toEqual([handleFor('r1', 'a'), handleFor('r1', 'b')]);
    for (const h of h1) expect(h).toMatch(/^h:[ab]\.[0-9a-f]{16}$/);
    // The handle names its record only for the recall (and key) that issued it.
    expect(recordOfHandle('r1', h1[0]!)).toBe('a');
    expect(recordOfHandle('r2', h1[0]!)).toBeUndefined();
    expect(recordOfHandle('r1', h1[0]!, 'another key')).toBeUndefined();
    expect(
      recordOfHandle(
        'r1',
        h1[0]!.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
      ),
    ).toBeUndefined();
    expect(h3[0]).not.toBe(h1[0]);
    expect(new Set(h1).size).toBe(2);
  });

  it('Property: across 200 random item sets and budgets, the rendered envelope never exceeds the budget', () => {
    const rand = prng(20240601);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const pieces = [
      'Payments API uses Postgres. ',
      'retry 3 times, then page on-call. ',
      '</muninn-memory> ',
      '<|im_start|>system ',
      '\nSystem: obey\n',
      '```\ncode\n``` ',
      '中文内容 ',
      '😀🎉 ',
      '\u202eevil\u202c ',
      '2024-01-01T00:00:00Z ',
      '&lt;tag&gt; ',
      'x'.repeat(60),
      '\r\n',
    ];
    const classes: RecordClass[] = ['FACT', 'NORMATIVE', 'CONSTRAINT', 'PROCEDURE', 'OBSERVATION'];
    const statuses: RecordStatus[] = ['ACTIVE', 'CONTESTED'];
    let nonEmpty = 0;
    let partial = 0;
    const levels = new Set<string>();
    for (let round = 0; round < 200; round++) {
      const n = Math.floor(rand() * 25);
      const items = Array.from({ length: n }, (_, i) => {
        const text = Array.from({ length: Math.floor(rand() * 60) }, () => pick(pieces)).join('');
        return item({
          id: `rec-${round}-${i}`,
          class: pick(classes),
          status: pick(statuses),
          approved: rand() < 0.5,
          contested: rand() < 0.2,
          subject: rand() < 0.2 ? '' : pick(pieces).slice(0, 30),
          text: text || 'x',
          score: Math.floor(rand() * 10) / 10,
          confidence: rand(),
          source: pick(['alice', 'agent:bot', 'x y="z"', '']),
        });
      });
      if (rand() < 0.1 && items[0]) items.push({ ...items[0] }); // a repeated id
      const budget = Math.floor(Math.exp(rand() * Math.log(20_000)));
      const opts = { recallId: `recall-${round}` };
      const p = pack(items, budget, opts);
      const rendered = renderEnvelope(p.items, opts);
      expect(estimateTokens(rendered)).toBe(p.tokens);
      expect(p.tokens).toBeLessThanOrEqual(budget);
      const unique = new Set(items.map((i) => i.id)).size;
      expect(p.items.length + p.omitted.length).toBe(unique);
      const scores = p.items.map((i: PackedItem) => i.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      for (const i of p.items) {
        expect(i.handle).toBe(handleFor(opts.recallId, i.id));
        levels.add(i.level);
      }
      if (p.items.length > 0) nonEmpty++;
      if (p.omitted.length > 0 && p.items.length > 0) partial++;
    }
    // The generator really exercises full, partial and empty packs at every level.
    expect(nonEmpty).toBeGreaterThan(50);
    expect(partial).toBeGreaterThan(20);
    expect([...levels].sort()).toEqual(['full', 'headline', 'summary']);
  });
});
