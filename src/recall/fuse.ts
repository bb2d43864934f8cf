import { badInput } from '../domain/errors.ts';
import type { RecordClass, RecordStatus } from '../domain/model.ts';
import type { RecordView } from '../ports/graph.ts';
import { SIGNALS, type Recipe, type Signal } from './recipes.ts';

/**
 * Fusion and blending: pure functions over the arms' ranked id lists and per-record features. No I/O and
 * no clock: `now` is an argument. Also the item shape the later stages (precedence, pack, envelope)
 * share, and the `why` every returned item carries.
 */

export interface ArmHit {
  readonly arm: string;
  /** 1-based rank within that arm's list. */
  readonly rank: number;
}

export interface Fused {
  readonly id: string;
  /** Σ 1 / (k + rank) over the arms that returned the id. */
  readonly score: number;
  readonly hits: ArmHit[];
}

/**
 * Reciprocal-rank fusion. Ranks are 1-based positions in each list; an id repeated within one list counts
 * once, at its best rank. The result is sorted by score (descending), ties broken by id (code-unit order),
 * and each id's contributions are summed largest first, so the order of `lists` never changes a score.
 */
export function rrf(
  lists: ReadonlyArray<{ arm: string; ids: readonly string[]; weight?: number }>,
  k = 60,
): Fused[] {
  if (!(Number.isFinite(k) && k > 0)) throw badInput('rrf k must be a positive number', { k: String(k) });
  const hits = new Map<string, ArmHit[]>();
  const weight = new Map(lists.map((l) => [l.arm, l.weight ?? 1]));
  for (const list of lists) {
    const seen = new Set<string>();
    list.ids.forEach((id, i) => {
      if (seen.has(id)) return;
      seen.add(id);
      const h = hits.get(id);
      const hit = { arm: list.arm, rank: i + 1 };
      if (h) h.push(hit);
      else hits.set(id, [hit]);
    });
  }
  const out: Fused[] = [];
  for (const [id, h] of hits) {
    const score = h
      .map((x) => (weight.get(x.arm) ?? 1) / (k + x.rank))
      .sort((a, b) => b - a)
      .reduce((s, x) => s + x, 0);
    out.push({ id, score, hits: h });
  }
  return out.sort((a, b) => b.score - a.score || cmp(a.id, b.id));
}

/** What the blend needs to know about one candidate (read from the record, the request and feedback). */
export interface CandidateFeatures {
  /** 0 = the request's namespace; n = n levels away up (or down) the path. See `namespaceDistance`. */
  readonly namespaceDistance: number;
  /** 0..1; ≥ 0.9 counts as authoritative (a reviewed reference), below is an agent claim. */
  readonly authority: number;
  readonly confidence: number;
  readonly validFrom: string;
  readonly recordedAt: string;
  readonly class: RecordClass;
  /** Past usefulness from feedback, -1..1 (0 = unknown). */
  readonly utility: number;
  /** The query names the record's subject (`namesSubject`). */
  readonly subjectNamed: boolean;
}

export interface SignalScore {
  readonly value: number;
  readonly weight: number;
  readonly contribution: number;
}
export type SignalBreakdown = Readonly<Record<Signal, SignalScore>>;

export interface Blended {
  readonly id: string;
  /** The raw RRF score. */
  readonly rrf: number;
  readonly hits: ArmHit[];
  /** Σ weight × value over the signals. */
  readonly score: number;
  readonly signals: SignalBreakdown;
}

const DAY_MS = 86_400_000;

/**
 * Blend fused relevance with the recipe's policy signals. Every value is in [0, 1] (utility in [-1, 1]):
 *  - rrf: the fused score divided by the best possible one (rank 1 in every enabled arm, at its weight), clamped;
 *  - scopeProximity: 1 / (1 + namespaceDistance);
 *  - authority, confidence: as given, clamped;
 *  - recency: 0.5 ^ (age / half-life), age from the later of validFrom and recordedAt to `now` (never
 *    negative); 0 when no time parses;
 *  - classPriority: the recipe's base for the class plus any query-intent hint, clamped;
 *  - utility: as given, clamped to [-1, 1];
 *  - subject: 1 when the query names the record's subject, else 0.
 * A candidate without features is dropped: features come from the entitled, visible fetch, so a missing
 * entry means the record was filtered out, and it must not be ranked (filter before rank).
 * Sorted by score (descending), then rrf, then id.
 */
export function blend(
  candidates: readonly Fused[],
  features: ReadonlyMap<string, CandidateFeatures>,
  recipe: Recipe,
  now: string,
  hints: Readonly<Partial<Record<RecordClass, number>>> = {},
): Blended[] {
  // The best possible fused score: rank 1 in every enabled arm, each at its weight.
  const armWeight = (Object.keys(recipe.arms) as Array<keyof typeof recipe.arms>)
    .filter((a) => recipe.arms[a])
    .reduce((s, a) => s + (recipe.armWeights[a] ?? 1), 0);
  const rrfBest = (armWeight || 1) / (recipe.rrfK + 1);
  const nowMs = Date.parse(now);
  const out: Blended[] = [];
  for (const c of candidates) {
    const f = features.get(c.id);
    if (!f) continue;
    const values: Record<Signal, number> = {
      rrf: clamp(c.score / rrfBest, 0, 1),
      scopeProximity: Number.isFinite(f.namespaceDistance) ? 1 / (1 + Math.max(0, f.namespaceDistance)) : 0,
      authority: clamp(f.authority, 0, 1),
      confidence: clamp(f.confidence, 0, 1),
      recency: recency(f, nowMs, recipe.recencyHalfLifeDays),
      classPriority: clamp((recipe.classPriority[f.class] ?? 0) + (hints[f.class] ?? 0), 0, 1),
      utility: clamp(f.utility, -1, 1),
      subject: f.subjectNamed ? 1 : 0,
    };
    let score = 0;
    const signals = {} as Record<Signal, SignalScore>;
    for (const s of SIGNALS) {
      const weight = Number.isFinite(recipe.weights[s]) ? recipe.weights[s] : 0;
      const contribution = weight * values[s];
      signals[s] = { value: values[s], weight, contribution };
      score += contribution;
    }
    out.push({ id: c.id, rrf: c.score, hits: c.hits, score, signals });
  }
  return out.sort((a, b) => b.score - a.score || b.rrf - a.rrf || cmp(a.id, b.id));
}

function recency(f: CandidateFeatures, nowMs: number, halfLifeDays: number): number {
  const times = [Date.parse(f.validFrom), Date.parse(f.recordedAt)].filter(Number.isFinite);
  if (times.length === 0 || !Number.isFinite(nowMs) || !(halfLifeDays > 0)) return 0;
  const ageDays = Math.max(0, nowMs - Math.max(...times)) / DAY_MS;
  return Math.pow(0.5, ageDays / halfLifeDays);
}

/**
 * Steps between two namespaces through their common ancestor: 0 for the same path, 1 for the parent or a
 * child, 2 for a grandparent or a sibling, and so on.
 */
export function namespaceDistance(recordNs: string, requestNs: string): number {
  const a = recordNs.split('/');
  const b = requestNs.split('/');
  let common = 0;
  while (common < a.length && common < b.length && a[common] === b[common]) common++;
  return a.length - common + (b.length - common);
}

/** The precedence rule that let one item override another. */
export type PrecedenceRule = 'narrower-scope' | 'authority' | 'later-valid';

export interface Provenance {
  readonly proposedBy: string;
  readonly changesetId: string | null;
  /** Episodes the statement was extracted from. */
  readonly episodes: readonly string[];
}

/** Why an item was returned: arms and ranks, the blend, anchor, provenance, confidence, precedence. */
export interface Why {
  readonly arms: readonly ArmHit[];
  readonly rrf: number;
  readonly score: number;
  readonly signals: SignalBreakdown;
  /** The anchor entity the graph arm started from, when it found the item. */
  readonly anchor: string | null;
  readonly provenance: Provenance;
  readonly confidence: number;
  /** Items this one overrode in precedence, with the deciding rule. */
  readonly overrode: ReadonlyArray<{ readonly id: string; readonly rule: PrecedenceRule }>;
  /** Items it conflicts with that no rule decided (both returned, contested). */
  readonly contestedWith: readonly string[];
}

/** One candidate after blending, joined with its record: the unit precedence, pack and envelope use. */
export interface RecallItem {
  readonly id: string;
  readonly namespace: string;
  readonly class: RecordClass;
  readonly status: RecordStatus;
  readonly subject: string;
  readonly predicate: string;
  readonly object: string;
  readonly text: string;
  readonly confidence: number;
  /** 0..1; ≥ 0.9 is authoritative. */
  readonly authority: number;
  readonly validFrom: string;
  readonly validTo: string | null;
  readonly recordedAt: string;
  /** A reviewer approved it (meaningful for NORMATIVE: only approved ones may be instructions). */
  readonly approved: boolean;
  /** Records linked to this one by CONTRADICTS (either direction). */
  readonly contradicts: readonly string[];
  /** Short provenance for the envelope (who proposed it). */
  readonly source: string;
  readonly score: number;
  readonly contested: boolean;
  readonly why: Why;
}

/** Features of a stored record for `blend`. */
export function featuresOf(
  r: RecordView,
  requestNamespace: string,
  extra: { authority: number; utility: number; subjectNamed: boolean },
): CandidateFeatures {
  return {
    namespaceDistance: namespaceDistance(r.namespace, requestNamespace),
    authority: extra.authority,
    confidence: r.confidence,
    validFrom: r.validFrom,
    recordedAt: r.recordedAt,
    class: r.class,
    utility: extra.utility,
    subjectNamed: extra.subjectNamed,
  };
}

/** Join a blended candidate with its record into a RecallItem. */
export function toRecallItem(
  b: Blended,
  r: RecordView,
  extra: { authority: number; approved: boolean; contradicts: readonly string[]; anchor: string | null },
): RecallItem {
  return {
    id: r.id,
    namespace: r.namespace,
    class: r.class,
    status: r.status,
    subject: r.subject,
    predicate: r.predicate,
    object: r.object,
    text: r.text,
    confidence: r.confidence,
    authority: extra.authority,
    validFrom: r.validFrom,
    validTo: r.validTo,
    recordedAt: r.recordedAt,
    approved: extra.approved,
    contradicts: extra.contradicts,
    source: r.proposedBy,
    score: b.score,
    contested: r.status === 'CONTESTED',
    why: {
      arms: b.hits,
      rrf: b.rrf,
      score: b.score,
      signals: b.signals,
      anchor: extra.anchor,
      provenance: {
        proposedBy: r.proposedBy,
        changesetId: r.changesetId,
        episodes: episodesOf(r.sourcesJson),
      },
      confidence: r.confidence,
      overrode: [],
      contestedWith: [],
    },
  };
}

function episodesOf(sourcesJson: string): string[] {
  try {
    const v: unknown = JSON.parse(sourcesJson);
    if (!Array.isArray(v)) return [];
    const ids = v
      .map((s: unknown) =>
        s && typeof s === 'object' && 'episodeId' in s && typeof s.episodeId === 'string'
          ? s.episodeId
          : null,
      )
      .filter((s): s is string => s !== null);
    return [...new Set(ids)];
  } catch {
    return [];
  }
}

/** Clamp into [lo, hi]; a non-finite value counts as 0 (unknown), then clamped. */
const clamp = (x: number, lo: number, hi: number): number =>
  Math.min(hi, Math.max(lo, Number.isFinite(x) ? x : 0));

/** Code-unit order: the same on every machine and locale. */
export const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
