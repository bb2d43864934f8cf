import { badInput } from '../domain/errors.ts';

/**
 * Ranking metrics for golden-set evaluation: pure functions over the ids recall returned (best first), the
 * ids a judge marked relevant and, for nDCG, optional relevance grades. No I/O, no clock, no randomness.
 *
 * Conventions every function shares, so the numbers of one query are comparable with each other:
 * - Ranks are 1-based positions in `returned` as given. Only the first `k` positions are looked at.
 * - An id repeated in `returned` counts once, at its first position; a later repeat is worth nothing but
 *   still occupies its slot, because the caller was shown it instead of something else.
 * - An empty relevant set is an error, not a 0 or a 1: a query nobody can answer says nothing about recall.
 * - Grades are linear gains (> 0); a relevant id without a grade has grade 1; without grades nDCG is binary.
 */

/** The per-query metrics, in the fixed order reports print them. */
export const METRICS = [
  'hitAtK',
  'recallAnyAtK',
  'recallAllAtK',
  'recallAtK',
  'reciprocalRank',
  'ndcgAt10',
] as const;
export type MetricName = (typeof METRICS)[number];
export type QueryMetrics = Readonly<Record<MetricName, number>>;

/** nDCG is always reported at 10, whatever k the run uses, so it stays comparable across runs. */
export const NDCG_K = 10;

export type Grades = Readonly<Record<string, number>>;

function checkK(k: number): void {
  if (!(Number.isInteger(k) && k > 0)) throw badInput('k must be a positive integer', { k: String(k) });
}

function relevantSet(relevant: Iterable<string>): ReadonlySet<string> {
  const s = new Set(relevant);
  if (s.size === 0) throw badInput('a query needs at least one relevant id');
  return s;
}

/** The relevant ids found in the top k, each once, with its 1-based rank (first occurrence). */
function foundInTopK(
  returned: readonly string[],
  relevant: ReadonlySet<string>,
  k: number,
): Map<string, number> {
  checkK(k);
  const found = new Map<string, number>();
  const top = returned.slice(0, k);
  top.forEach((id, i) => {
    if (relevant.has(id) && !found.has(id)) found.set(id, i + 1);
  });
  return found;
}

/** 1 if at least one relevant id is in the top k, else 0. */
export function hitAtK(returned: readonly string[], relevant: Iterable<string>, k: number): number {
  return foundInTopK(returned, relevantSet(relevant), k).size > 0 ? 1 : 0;
}

/**
 * The same number as `hitAtK`, under the name the LoCoMo reports use ("any of the evidence was recalled"),
 * so the golden-set report and `eval:locomo` read alike.
 */
export function recallAnyAtK(returned: readonly string[], relevant: Iterable<string>, k: number): number {
  return hitAtK(returned, relevant, k);
}

/** 1 if every relevant id is in the top k, else 0: the bar for multi-hop questions that need all evidence. */
export function recallAllAtK(returned: readonly string[], relevant: Iterable<string>, k: number): number {
  const rel = relevantSet(relevant);
  return foundInTopK(returned, rel, k).size === rel.size ? 1 : 0;
}

/** The fraction of relevant ids found in the top k (0..1). */
export function recallAtK(returned: readonly string[], relevant: Iterable<string>, k: number): number {
  const rel = relevantSet(relevant);
  return foundInTopK(returned, rel, k).size / rel.size;
}

/** 1 / rank of the first relevant id within the top k, else 0. Its mean over queries is MRR. */
export function reciprocalRank(returned: readonly string[], relevant: Iterable<string>, k: number): number {
  const found = foundInTopK(returned, relevantSet(relevant), k);
  let best = Infinity;
  for (const r of found.values()) best = Math.min(best, r);
  return best === Infinity ? 0 : 1 / best;
}

function gradeOf(id: string, grades: Grades | undefined): number {
  const g = grades && Object.hasOwn(grades, id) ? grades[id]! : 1;
  if (!(Number.isFinite(g) && g > 0)) throw badInput('a relevance grade must be a positive number', { id });
  return g;
}

const discount = (rank: number): number => 1 / Math.log2(rank + 1);

/**
 * Normalised discounted cumulative gain at k: Σ gain / log2(rank + 1) over the relevant ids in the top k,
 * divided by the same sum for the ideal order (all relevant ids, highest grade first). Grades for ids
 * outside `relevant` are ignored: the relevant set decides what counts, grades only weigh it.
 */
export function ndcgAtK(
  returned: readonly string[],
  relevant: Iterable<string>,
  k: number,
  grades?: Grades,
): number {
  const rel = relevantSet(relevant);
  const found = foundInTopK(returned, rel, k);
  let dcg = 0;
  for (const [id, rank] of found) dcg += gradeOf(id, grades) * discount(rank);
  const ideal = [...rel].map((id) => gradeOf(id, grades)).sort((a, b) => b - a);
  let idcg = 0;
  ideal.slice(0, k).forEach((g, i) => (idcg += g * discount(i + 1)));
  // Float sums in another order can exceed the ideal by an ulp; a perfect ranking reads as exactly 1.
  return Math.min(1, dcg / idcg);
}

/** Every metric of one query: the @k ones at `k`, nDCG at `NDCG_K`. */
export function scoreQuery(
  returned: readonly string[],
  relevant: Iterable<string>,
  k: number,
  grades?: Grades,
): QueryMetrics {
  const rel = relevantSet(relevant);
  return {
    hitAtK: hitAtK(returned, rel, k),
    recallAnyAtK: recallAnyAtK(returned, rel, k),
    recallAllAtK: recallAllAtK(returned, rel, k),
    recallAtK: recallAtK(returned, rel, k),
    reciprocalRank: reciprocalRank(returned, rel, k),
    ndcgAt10: ndcgAtK(returned, rel, NDCG_K, grades),
  };
}

export interface MetricMeans {
  /** How many queries the means are over (≥ 1). */
  readonly n: number;
  readonly means: QueryMetrics;
}

/**
 * Mean of every metric over the queries, summed in the given order so the result is bit-for-bit stable.
 * Nothing to average is an error: an empty mean would read as a score of 0 (or NaN in a report).
 */
export function meanMetrics(rows: ReadonlyArray<{ readonly metrics: QueryMetrics }>): MetricMeans {
  if (rows.length === 0) throw badInput('no queries to aggregate');
  const sums = Object.fromEntries(METRICS.map((m) => [m, 0])) as Record<MetricName, number>;
  for (const r of rows) for (const m of METRICS) sums[m] += r.metrics[m];
  const means = Object.fromEntries(METRICS.map((m) => [m, sums[m] / rows.length])) as Record<
    MetricName,
    number
  >;
  return { n: rows.length, means };
}

/**
 * Means per tag (category). A query with several tags counts in each; an untagged query only in the overall
 * mean. Tags come out in code-unit order so reports and stored runs are stable.
 */
export function meanMetricsByTag(
  rows: ReadonlyArray<{ readonly tags: readonly string[]; readonly metrics: QueryMetrics }>,
): Record<string, MetricMeans> {
  const groups = new Map<string, Array<{ metrics: QueryMetrics }>>();
  for (const r of rows) {
    for (const tag of new Set(r.tags)) {
      const g = groups.get(tag);
      if (g) g.push(r);
      else groups.set(tag, [r]);
    }
  }
  const out: Record<string, MetricMeans> = {};
  for (const tag of [...groups.keys()].sort(cmp)) out[tag] = meanMetrics(groups.get(tag)!);
  return out;
}

/** Code-unit order, independent of the locale. */
export const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
