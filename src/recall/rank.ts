import { isApprovedInstruction } from '../domain/instructions.ts';
import type { RecordView } from '../ports/graph.ts';
import { collapseBySpan, spanKey } from './collapse.ts';
import { blend, featuresOf, rrf, toRecallItem, type Fused, type RecallItem } from './fuse.ts';
import { namesSubject, subjectWords } from './lexical.ts';
import { dropNearDuplicates } from './pack.ts';
import { filterVisible, resolvePrecedence } from './precedence.ts';
import { classHints, type Recipe } from './recipes.ts';
import { temporalRanking } from './temporal.ts';

/**
 * Recall's ranking steps, from the arms' id lists and the records read for them to the items recall may
 * show: the temporal vote, span collapse and fusion, the policy blend, then visibility, precedence and
 * near duplicates. No I/O: the records were read under the caller's scope before any of this runs.
 */

/** One arm's ranked ids and its weight in the fusion. */
export interface ArmList {
  readonly arm: string;
  readonly ids: readonly string[];
  readonly weight: number;
}

export type Candidate = RecordView & { contradicts: string[] };

/** A when-question: one more vote for the found candidates whose text places something in time. */
export function withTemporalVote(
  armLists: readonly ArmList[],
  query: string,
  records: ReadonlyMap<string, Candidate>,
  recipe: Recipe,
  k: number,
): ArmList[] {
  const found = rrf(
    armLists.filter((l) => ['lexical', 'context', 'vector'].includes(l.arm)),
    recipe.rrfK,
  ).map((f) => f.id);
  const ids = temporalRanking(query, found, (id) => records.get(id)?.text, k);
  return ids.length > 0
    ? [...armLists, { arm: 'temporal', ids, weight: recipe.armWeights.temporal ?? 1 }]
    : [...armLists];
}

/** Records citing the same span (a turn's observation and its sentences' statements) are one item. */
export function fuseBySpan(
  armLists: readonly ArmList[],
  records: ReadonlyMap<string, Candidate>,
  rrfK: number,
): Fused[] {
  const keyOf = (id: string) => {
    const r = records.get(id);
    return r && spanKey(r);
  };
  return rrf(collapseBySpan(armLists, keyOf, rrfK), rrfK);
}

const authority = (r: { confidence: number; class: string }) =>
  r.class === 'NORMATIVE' ? 0.95 : Math.min(0.85, r.confidence);

/** The fused candidates blended with their records' signals under the recipe, as recall items. */
export function blendedItems(
  fused: readonly Fused[],
  records: ReadonlyMap<string, Candidate>,
  anchors: ReadonlyArray<readonly [string, string]>,
  request: { query: string; namespace: string; now: string; recipe: Recipe },
): RecallItem[] {
  const queryWords = subjectWords(request.query);
  const features = new Map(
    [...records.values()].map((r) => [
      r.id,
      featuresOf(r, request.namespace, {
        authority: authority(r),
        utility: r.utility,
        subjectNamed: namesSubject(queryWords, r.subject),
      }),
    ]),
  );
  const anchorOf = new Map(anchors.map(([id, anchor]) => [id, anchor]));
  const blended = blend(fused, features, request.recipe, request.now, classHints(request.query));
  return blended.map((b) => {
    const r = records.get(b.id)!;
    return toRecallItem(b, r, {
      authority: authority(r),
      // Recorded by a review (fold.ts), never inferred: an auto-admitted norm is data, not an instruction.
      approved: isApprovedInstruction(r),
      contradicts: r.contradicts,
      anchor: anchorOf.get(b.id) ?? null,
    });
  });
}

/** What recall may show at `validAt`, conflicts decided, then one of each identical text. */
export function decidedItems(items: readonly RecallItem[], validAt: string, recipe: Recipe): RecallItem[] {
  const visible = filterVisible(items, { validAt });
  const decided = resolvePrecedence(visible);
  const norm = (s: string) => s.toLowerCase().replace(/\s+/g, ' ').trim();
  const text = new Map(decided.map((i) => [i.id, norm(i.text)]));
  return dropNearDuplicates(
    decided,
    (a, b) => (text.get(a.id) === text.get(b.id) ? 1 : 0),
    recipe.nearDuplicateCosine,
  );
}
