import { badInput } from '../domain/errors.ts';
import type { RecordClass } from '../domain/model.ts';

/**
 * Recall recipes: which arms run and how their fused ranks are blended with policy signals. A recipe is
 * data, never code: the pipeline reads these numbers and has no other knobs. Changing how recall ranks
 * means adding or editing a recipe here (and evaluating it), not adding an `if` somewhere.
 */

/** The signals a blend combines, in the fixed order they are summed (so scores are bit-for-bit stable). */
export const SIGNALS = [
  'rrf',
  'scopeProximity',
  'authority',
  'confidence',
  'recency',
  'classPriority',
  'utility',
  'subject',
] as const;
export type Signal = (typeof SIGNALS)[number];

export interface RecipeArms {
  /** Neo4j fulltext (BM25): names, codes, error strings. */
  readonly lexical: boolean;
  /** BM25 over the same matches with each turn's neighbouring turns added (the turn in its context). */
  readonly context: boolean;
  /** Neo4j vector index: paraphrase. */
  readonly vector: boolean;
  /** 1–2 hops from anchor entities over ABOUT / APPLIES_TO / PART_OF. */
  readonly graph: boolean;
  /** Scope inheritance: walk up the namespace path. */
  readonly scope: boolean;
  /** For a when-question, the other arms' candidates whose text carries a time expression (temporal.ts). */
  readonly temporal: boolean;
}

export interface Recipe {
  readonly name: string;
  readonly arms: RecipeArms;
  /** How many candidates each arm returns before fusion (at least the recall's `limit`). */
  readonly perArmK: number;
  /** The reciprocal-rank-fusion constant (60 in the literature and here). */
  readonly rrfK: number;
  /** Each arm's weight in the fusion (weighted RRF: weight / (k + rank)); absent = 1. */
  readonly armWeights: Readonly<Partial<Record<keyof RecipeArms, number>>>;
  /**
   * Weights of the blend. Every signal value lies in [0, 1] except `utility` in [-1, 1]; the final score
   * is Σ weight × value. `rrf` is the fused relevance normalised by its best possible value; `subject` is
   * 1 when the query names the record's subject (a turn's speaker, a statement's subject), else 0.
   */
  readonly weights: Readonly<Record<Signal, number>>;
  /** Base priority per class in [0, 1]; absent = 0. Query-intent hints are added on top (then clamped). */
  readonly classPriority: Readonly<Partial<Record<RecordClass, number>>>;
  /** Recency halves every this many days. */
  readonly recencyHalfLifeDays: number;
  /** Two items at or above this cosine are near-duplicates; the lower-scored one is dropped. */
  readonly nearDuplicateCosine: number;
}

const WEIGHTS: Recipe['weights'] = {
  rrf: 0.6,
  scopeProximity: 0.1,
  authority: 0.08,
  confidence: 0.08,
  recency: 0.05,
  classPriority: 0.05,
  utility: 0.04,
  // The query names the record's subject. At most one rank's difference in every arm of `hybrid`:
  // rrf × (1 − (k + 1) / (k + 2)) = 0.6 / 12 = 0.05, so a named subject lifts an item over one ranked
  // one place better everywhere, never two. The LoCoMo weight search (README, Recall) wants more on
  // every fold; the bound keeps it a tie-breaker on data whose questions name speakers less often.
  subject: 0.05,
};

const CLASS_PRIORITY: Recipe['classPriority'] = {
  NORMATIVE: 0.7,
  CONSTRAINT: 0.7,
  DECISION: 0.6,
  PROCEDURE: 0.6,
  FACT: 0.5,
  PREFERENCE: 0.5,
  EVENT: 0.4,
  OBSERVATION: 0.3,
};

const base = {
  perArmK: 50,
  rrfK: 60,
  armWeights: {},
  weights: WEIGHTS,
  classPriority: CLASS_PRIORITY,
  recencyHalfLifeDays: 180,
  nearDuplicateCosine: 0.92,
} as const;

function freeze(r: Recipe): Recipe {
  Object.freeze(r.arms);
  Object.freeze(r.weights);
  Object.freeze(r.classPriority);
  Object.freeze(r.armWeights);
  return Object.freeze(r);
}

/** The named recipes. `hybrid` is the default. */
export const RECIPES: Readonly<Record<string, Recipe>> = Object.freeze({
  hybrid: freeze({
    name: 'hybrid',
    arms: { lexical: true, context: true, vector: true, graph: true, scope: true, temporal: true },
    ...base,
    // How deep each arm looks: the smallest depth whose LoCoMo dev scores all stay within 0.005 of depth
    // 50's (`npm run eval:locomo -- --recipes hybrid --tenant <kept>`, one ingest, 2026-12-05).
    // recall_any / recall_all / MRR: 50 0.828 / 0.707 / 0.580, 40 0.825 / 0.711 / 0.580, 30 0.824 /
    // 0.710 / 0.578, 25 0.824 / 0.713 / 0.576, 20 0.820 / 0.709 / 0.577. With rrfK 10 a 26th place adds
    // under a third of a first place's vote, while every candidate costs its arm, the record read and the
    // blend: at 100k records, 8 callers in a service namespace 47 → 58 recalls/s (bench:recall).
    perArmK: 25,
    // Arm weights and k from the leave-one-conversation-out grid search on the LoCoMo development split
    // (src/eval/locomo-weights.ts, `npm run eval:locomo -- --search-weights`; README, Recall). The scope
    // arm (LoCoMo has no inherited records, so the search cannot set it) ranks the ancestors' rules
    // without looking at the query: it brings them in, but its vote may not outweigh one rank's
    // difference in every text arm, so it stays below (lexical + context + vector) / (k + 2) = 0.29.
    rrfK: 10,
    armWeights: { lexical: 1, context: 1, vector: 1.5, graph: 0.3, scope: 0.25, temporal: 2 },
  }),
  bm25: freeze({
    name: 'bm25',
    arms: { lexical: true, context: false, vector: false, graph: false, scope: false, temporal: false },
    ...base,
  }),
  vector: freeze({
    name: 'vector',
    arms: { lexical: false, context: false, vector: true, graph: false, scope: false, temporal: false },
    ...base,
  }),
});

export const DEFAULT_RECIPE = 'hybrid';

/** The recipe of that name (default `hybrid`). An unknown name is the caller's mistake: BAD_USER_INPUT. */
export function getRecipe(name: string = DEFAULT_RECIPE): Recipe {
  const r = Object.hasOwn(RECIPES, name) ? RECIPES[name] : undefined;
  if (!r) throw badInput(`unknown recall recipe "${name}"`, { recipe: name, known: Object.keys(RECIPES) });
  return r;
}

/** How much a recognised query intent raises a class's priority (added to the recipe's base). */
const HINT = 0.3;

const INTENTS: ReadonlyArray<{ re: RegExp; classes: readonly RecordClass[] }> = [
  {
    // "how should I …", "how do we …", "how to …", "what's the right way to …", "steps to …"
    re: /\bhow\s+(?:should|do|does|can|could|would|must|to)\b|\b(?:what(?:'s|\s+is)\s+the\s+(?:best\s+|right\s+|correct\s+)?way\s+to|steps\s+to)\b/i,
    classes: ['PROCEDURE', 'CONSTRAINT'],
  },
  {
    // "can I …", "am I allowed …", "is it ok to …", "are we permitted …", "must we …", "rules for …"
    re: /^\s*(?:can|may|must)\s+(?:i|we)\b|\b(?:allowed|permitted|forbidden|is\s+it\s+ok(?:ay)?\s+to|rules?\s+(?:for|on|about))\b/i,
    classes: ['CONSTRAINT', 'NORMATIVE'],
  },
  {
    // "what is …", "who is …", "what's …", "where are …", "which … is"
    re: /\b(?:what|who|where|which)(?:'s|\s+(?:is|are|was|were))\b/i,
    classes: ['FACT'],
  },
  {
    // "why did we …", "why do they …", "why was …", "what was the reason …"
    re: /\bwhy\s+(?:did|do|does|was|were|is|are|have|has|had)\b|\b(?:reason|rationale)\s+(?:for|behind|why)\b/i,
    classes: ['DECISION'],
  },
  {
    // "when did …", "what happened …"
    re: /\bwhen\s+(?:did|was|were)\b|\bwhat\s+happened\b/i,
    classes: ['EVENT'],
  },
  {
    // "does X prefer …", "what does X like"
    re: /\b(?:prefer(?:s|red|ence)?|favou?rite)\b/i,
    classes: ['PREFERENCE'],
  },
];

/**
 * Query-intent hints: classes the wording of the question asks for, with the boost to add to their
 * priority. "How should I…" favours procedures and constraints, "what is…" facts, "why did we…"
 * decisions. Pure and total: any string, including an empty one, gives a (possibly empty) map.
 */
export function classHints(query: string): Partial<Record<RecordClass, number>> {
  const out: Partial<Record<RecordClass, number>> = {};
  if (typeof query !== 'string') return out;
  const q = query.slice(0, 2000);
  for (const { re, classes } of INTENTS) {
    if (!re.test(q)) continue;
    for (const c of classes) out[c] = HINT;
  }
  return out;
}
