/**
 * The cosine thresholds that turn an embedding similarity into a decision, per embedding model.
 *
 * Why per model: a cosine is not a probability, and each model spreads its cosines differently. The rules
 * of ingest were written on all-MiniLM-L6-v2, where an unrelated pair of turns scores about 0.09;
 * bge-small-en-v1.5 gives the same pair about 0.39 and squeezes near-duplicates into 0.95–1. The same 0.85
 * would call many more pairs "extends" under bge, and the same 0.75 would tie far more entity names.
 *
 * How the other models' values are set (`npm run calibrate`, `test/bench/calibrate-thresholds.ts`): each
 * threshold keeps the share of pairs it flags. Over a fixed pair set — texts with their nearest neighbours
 * under either model, seeded random pairs, and seeded edits of each text (a word dropped, a word replaced,
 * case and end punctuation dropped) — a model's threshold is its cosine at the rank MiniLM's threshold has
 * among MiniLM's cosines (quantile matching). Statement thresholds are matched on statement pairs, entity
 * thresholds on name pairs (names are short: their cosines spread differently again). The texts are the
 * LoCoMo dev conversations' turns, never its questions.
 *
 * A model without a row (the hashing embedder, OpenAI's) is judged on MiniLM's scale, as before.
 * A decision written into an event is never re-decided, so a new row changes only later decisions.
 */
export interface CosineThresholds {
  /** A statement at least this close to a live record is a repeat of it (relate's DUPLICATE). */
  readonly duplicate: number;
  /** A statement about the same subject at least this close extends the record (relate's EXTENDS). */
  readonly extends: number;
  /** An entity name at least this close to a visible entity of the same type resolves to it. */
  readonly entityMerge: number;
  /** An entity name at least this close is recorded as a tentative SAME_AS of the nearest entity. */
  readonly entitySameAs: number;
}

/** The scale the rules were written on. */
export const MINILM_THRESHOLDS: CosineThresholds = Object.freeze({
  duplicate: 0.97,
  extends: 0.85,
  entityMerge: 0.92,
  entitySameAs: 0.75,
});

/** Keyed by the model's name: a modelId up to its '@' (`bge-small-en-v1.5@langchain4j-…#…`). */
const BY_MODEL: Readonly<Record<string, CosineThresholds>> = Object.freeze({
  'all-MiniLM-L6-v2': MINILM_THRESHOLDS,
  // 2026-12-04, `npm run calibrate` (2,759 turns, 46,813 pairs; 157 names, 2,826 pairs): statements
  // 0.97 → 0.981, 0.85 → 0.928; names 0.92 → 0.925, 0.75 → 0.836.
  'bge-small-en-v1.5': Object.freeze({
    duplicate: 0.981,
    extends: 0.928,
    entityMerge: 0.925,
    entitySameAs: 0.836,
  }),
});

/** The thresholds for vectors of `modelId` (a full modelId or a bare model name). */
export function thresholdsFor(modelId: string): CosineThresholds {
  const name = modelId.split('@')[0] ?? modelId;
  return BY_MODEL[name] ?? MINILM_THRESHOLDS;
}
