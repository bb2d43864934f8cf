import { cmp } from './fuse.ts';

/**
 * Same-span collapse. One conversational turn yields several records (the turn's observation and the
 * typed statements extracted from its sentences), and each may be found by a different arm. Returned
 * side by side they crowd the top k with one piece of evidence; so before fusion every arm's list is
 * rewritten to one representative per cited span, and the arms' votes for a span add up on it.
 */

interface Cited {
  readonly id: string;
  readonly sourcesJson: string;
}

/**
 * The span a record cites, as a key: `episodeId#label` (the turn) when its one source carries a turn
 * label, `episodeId#start-end` when not, and the record's own id when it cites several spans or none
 * (a reinforced statement stands for more than one turn).
 */
export function spanKey(r: Cited): string {
  try {
    const v: unknown = JSON.parse(r.sourcesJson);
    if (Array.isArray(v) && v.length === 1) {
      const s = v[0] as { episodeId?: unknown; label?: unknown; start?: unknown; end?: unknown };
      if (typeof s.episodeId === 'string') {
        const at = typeof s.label === 'string' && s.label ? s.label : `${String(s.start)}-${String(s.end)}`;
        return `${s.episodeId}#${at}`;
      }
    }
  } catch {
    // unreadable sources: the record stands alone
  }
  return `record:${r.id}`;
}

/**
 * Rewrites each arm's ranked ids so that records sharing a span key are represented by one of them: the
 * one with the best weighted reciprocal rank over all arms (ties by id). Ids without a key (records the
 * caller may not read) are dropped. Each list keeps its order; a repeat within a list keeps its best rank.
 */
export function collapseBySpan<L extends { readonly ids: readonly string[]; readonly weight?: number }>(
  lists: readonly L[],
  keyOf: (id: string) => string | undefined,
  k: number,
): L[] {
  const score = new Map<string, number>();
  for (const l of lists)
    l.ids.forEach((id, i) => score.set(id, (score.get(id) ?? 0) + (l.weight ?? 1) / (k + i + 1)));
  const best = new Map<string, string>();
  for (const [id, s] of score) {
    const key = keyOf(id);
    if (key === undefined) continue;
    const cur = best.get(key);
    const cs = cur === undefined ? -1 : score.get(cur)!;
    if (cur === undefined || s > cs || (s === cs && cmp(id, cur) < 0)) best.set(key, id);
  }
  return lists.map((l) => {
    const seen = new Set<string>();
    const ids: string[] = [];
    for (const id of l.ids) {
      const key = keyOf(id);
      const rep = key === undefined ? undefined : best.get(key);
      if (rep === undefined || seen.has(rep)) continue;
      seen.add(rep);
      ids.push(rep);
    }
    return { ...l, ids };
  });
}
