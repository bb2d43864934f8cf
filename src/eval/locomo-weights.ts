import { RECIPES, type RecipeArms } from '../recall/recipes.ts';
import { addScore, scoreRanked, type LocomoQuestionResult, type Row } from './locomo.ts';

/**
 * How `hybrid`'s arm weights, RRF constant and `subject` signal weight are chosen: a small grid, scored by leave-one-conversation-out
 * on the LoCoMo development split, never by reading single questions.
 *
 * One recall per question with the current `hybrid` and a deep list (100 items) gives, for each candidate,
 * the rank each arm gave it and its policy-signal contributions. Fusion and blend are then recomputed for
 * every grid point exactly as `blend` does (weighted RRF normalised by its best possible value, times the
 * recipe's rrf weight, plus the policy signals). For each conversation, the grid point with the best
 * objective on the OTHER conversations is scored on the held-out one; the pooled held-out scores estimate
 * how the procedure generalises, and the point best over all conversations is the one the recipe uses.
 * Objective: recall_any@k + recall_all@k + MRR (equal weight). Approximations: same-span collapse keeps the
 * representatives the current weights chose, and candidates outside the deep list are not seen.
 */

/** Arm weights, the RRF constant and the weight of the `subject` signal (the query names the record's subject). */
export type ArmWeights = Readonly<Record<keyof RecipeArms, number>> & {
  readonly rrfK: number;
  readonly subject: number;
};

/** The grid: lexical is the unit (the normalised fusion does not change when every weight is scaled). */
export const GRID = {
  context: [0, 0.5, 1],
  vector: [0.5, 1, 1.5, 2, 3],
  graph: [0, 0.3, 1],
  temporal: [0, 1, 2, 3],
  rrfK: [5, 10, 30, 60],
  subject: [0, 0.02, 0.05, 0.08, 0.12],
} as const;

/** The scope arm keeps the recipe's weight: LoCoMo has no inherited records, so the search cannot set it. */
const SCOPE = RECIPES['hybrid']!.armWeights.scope ?? 1;

export function gridPoints(): ArmWeights[] {
  const out: ArmWeights[] = [];
  for (const context of GRID.context)
    for (const vector of GRID.vector)
      for (const graph of GRID.graph)
        for (const temporal of GRID.temporal)
          for (const rrfK of GRID.rrfK)
            for (const subject of GRID.subject)
              out.push({ lexical: 1, context, vector, graph, scope: SCOPE, temporal, rrfK, subject });
  return out;
}

/** The ranked cited-label sets of one question's candidates under `w`. */
export function rerank(r: LocomoQuestionResult, w: ArmWeights): Array<readonly string[]> {
  const hybrid = RECIPES['hybrid']!;
  const arms = Object.keys(hybrid.arms) as Array<keyof RecipeArms>;
  const best = arms.filter((a) => hybrid.arms[a]).reduce((s, a) => s + w[a], 0) / (w.rrfK + 1) || 1;
  const scored = r.items.map((it, i) => {
    const fused = (it.arms ?? []).reduce(
      (s, h) => s + (w[h.arm as keyof RecipeArms] ?? 0) / (w.rrfK + h.rank),
      0,
    );
    // The policy part as recalled, with the subject signal moved from the recipe's weight to the point's.
    const subject = (it.subject ?? 0) * (w.subject - hybrid.weights.subject);
    const score = hybrid.weights.rrf * Math.min(1, fused / best) + (it.policy ?? 0) + subject;
    return { labels: it.labels, score, fused, i };
  });
  scored.sort((a, b) => b.score - a.score || b.fused - a.fused || a.i - b.i);
  return scored.map((s) => s.labels);
}

export interface Totals {
  readonly any: number;
  readonly all: number;
  readonly mrr: number;
  readonly n: number;
}

const objective = (t: Totals) => t.any + t.all + t.mrr;

function toTotals(rows: readonly Row[]): Totals {
  const r = rows.reduce(
    (a, x) => ({ any: a.any + x.any, all: a.all + x.all, rr: a.rr + x.rr, n: a.n + x.n }),
    {
      any: 0,
      all: 0,
      rr: 0,
      n: 0,
    },
  );
  return { any: r.any / (r.n || 1), all: r.all / (r.n || 1), mrr: r.rr / (r.n || 1), n: r.n };
}

export interface WeightSearch {
  /** Per held-out conversation: the point chosen on the others and its held-out score. */
  readonly folds: ReadonlyArray<{ readonly heldOut: string; readonly w: ArmWeights; readonly t: Totals }>;
  /** Pooled over the held-out folds (every question scored once, by weights chosen without it). */
  readonly heldOut: Totals;
  /** The point best over all conversations, and its score there (optimistic: chosen on the same data). */
  readonly chosen: { readonly w: ArmWeights; readonly t: Totals };
}

/** Leave-one-conversation-out over the grid, from deep `hybrid` recalls (items with arms and policy). */
export function searchWeights(results: readonly LocomoQuestionResult[], k: number): WeightSearch {
  const points = gridPoints();
  const convs = [...new Set(results.map((r) => r.question.sampleId))].sort();
  // Each point's totals per conversation, computed once; a fold sums the conversations it trains on.
  const byConv = points.map((w) =>
    convs.map((c) => {
      const row: Row = { any: 0, all: 0, rr: 0, n: 0 };
      for (const r of results)
        if (r.question.sampleId === c) addScore(row, scoreRanked(r.question.evidence, rerank(r, w), k));
      return row;
    }),
  );
  const best = (keep: (ci: number) => boolean) => {
    let at = 0;
    let top = -Infinity;
    byConv.forEach((rows, pi) => {
      const o = objective(toTotals(rows.filter((_, ci) => keep(ci))));
      if (o > top) [at, top] = [pi, o];
    });
    return at;
  };
  const folds = convs.map((c, ci) => {
    const pi = best((x) => x !== ci);
    return { heldOut: c, w: points[pi]!, t: toTotals([byConv[pi]![ci]!]), row: byConv[pi]![ci]! };
  });
  const all = best(() => true);
  return {
    folds: folds.map(({ heldOut, w, t }) => ({ heldOut, w, t })),
    heldOut: toTotals(folds.map((f) => f.row)),
    chosen: { w: points[all]!, t: toTotals(byConv[all]!) },
  };
}

const fmtW = (w: ArmWeights) =>
  `context ${w.context}, vector ${w.vector}, graph ${w.graph}, temporal ${w.temporal}, rrfK ${w.rrfK}, subject ${w.subject}`;
const fmtT = (t: Totals) => `${t.any.toFixed(3)} / ${t.all.toFixed(3)} / ${t.mrr.toFixed(3)} (n ${t.n})`;

export function formatWeightSearch(s: WeightSearch, k: number): string {
  return [
    `weight search (leave-one-conversation-out, lexical 1, scope ${SCOPE}; recall_any@${k} / recall_all@${k} / MRR):`,
    ...s.folds.map((f) => `  held out ${f.heldOut}: ${fmtW(f.w)} → ${fmtT(f.t)}`),
    `  pooled held-out: ${fmtT(s.heldOut)}`,
    `  best over all conversations: ${fmtW(s.chosen.w)} → ${fmtT(s.chosen.t)}`,
  ].join('\n');
}
