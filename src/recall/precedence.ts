import { withinNamespace, type RecordStatus } from '../domain/model.ts';
import { cmp, type PrecedenceRule, type RecallItem } from './fuse.ts';

/**
 * Visibility and precedence: pure functions over recall items. Time is an argument.
 */

export interface VisibilityItem {
  readonly status: RecordStatus;
  readonly validFrom: string;
  readonly validTo: string | null;
}

export interface VisibilityOptions {
  /** The world-time instant the request asks about (default: the request's now). */
  readonly validAt: string;
  /** Also return superseded, retracted and archived records and those outside their validity. */
  readonly includeHistory?: boolean | undefined;
}

/** Statuses recall returns by default: believed now (contested ones are returned, marked). */
const CURRENT: ReadonlySet<string> = new Set<RecordStatus>(['ACTIVE', 'CONTESTED']);
/** With history, also what was once believed. Never proposals (CANDIDATE), rejections, or erased tombstones. */
const HISTORY: ReadonlySet<string> = new Set<RecordStatus>([
  'ACTIVE',
  'CONTESTED',
  'SUPERSEDED',
  'RETRACTED',
  'ARCHIVED',
]);

/**
 * Keep what recall may show at `validAt`. By default: ACTIVE or CONTESTED records valid at that instant
 * (validFrom ≤ validAt < validTo). SUPERSEDED, RETRACTED, ARCHIVED, REJECTED, ERASED and CANDIDATE are
 * dropped, as are records not yet valid or already expired. With `includeHistory`: also SUPERSEDED,
 * RETRACTED and ARCHIVED, at any validity; REJECTED, ERASED and CANDIDATE never appear. Fails closed: an
 * unparsable `validAt` or validity bound hides the record unless history is asked for.
 */
export function filterVisible<T extends VisibilityItem>(items: readonly T[], asOf: VisibilityOptions): T[] {
  if (asOf.includeHistory === true) return items.filter((i) => HISTORY.has(i.status));
  const at = Date.parse(asOf.validAt);
  if (!Number.isFinite(at)) return [];
  return items.filter((i) => {
    if (!CURRENT.has(i.status)) return false;
    const from = Date.parse(i.validFrom);
    if (!Number.isFinite(from) || from > at) return false;
    if (i.validTo === null) return true;
    const to = Date.parse(i.validTo);
    return Number.isFinite(to) && to > at;
  });
}

/** At or above this authority an item is an authoritative reference; below, an agent claim. */
export const AUTHORITATIVE = 0.9;

/**
 * Predicates that hold many values at once ("Alice likes tea" and "Alice likes jazz" do not conflict).
 * Kept in step with the ingest relate stage's list.
 */
const MULTI_VALUED = new Set([
  'said',
  'says',
  'likes',
  'loves',
  'enjoys',
  'dislikes',
  'hates',
  'mentioned',
  'asked',
]);
/** Episodic classes: each statement is its own occurrence, so they conflict only through CONTRADICTS. */
const EPISODIC: ReadonlySet<string> = new Set(['OBSERVATION', 'EVENT']);

const norm = (s: string): string => s.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();

interface Keyed {
  readonly item: RecallItem;
  /** normalised subject + predicate, or null when the item cannot conflict by value. */
  readonly key: string | null;
  readonly object: string;
}

function keyed(item: RecallItem): Keyed {
  const p = norm(item.predicate);
  const byValue = !EPISODIC.has(item.class) && !MULTI_VALUED.has(p);
  return { item, key: byValue ? `${norm(item.subject)}\u0000${p}` : null, object: norm(item.object) };
}

function conflicts(a: Keyed, b: Keyed): boolean {
  if (a.item.contradicts.includes(b.item.id) || b.item.contradicts.includes(a.item.id)) return true;
  return a.key !== null && a.key === b.key && a.object !== b.object;
}

type Outcome = { winner: 'a' | 'b'; rule: PrecedenceRule } | { winner: null };

/**
 * The rules, strongest first:
 *  1. narrower scope: when one namespace lies strictly inside the other, the inner (longer) one wins;
 *     unrelated namespaces (siblings) are not ordered by this rule;
 *  2. an authoritative item (authority ≥ 0.9) beats an agent claim;
 *  3. the later validFrom wins;
 *  otherwise neither: both stay, contested.
 */
export function decide(a: RecallItem, b: RecallItem): Outcome {
  if (a.namespace !== b.namespace) {
    if (withinNamespace(a.namespace, b.namespace)) return { winner: 'a', rule: 'narrower-scope' };
    if (withinNamespace(b.namespace, a.namespace)) return { winner: 'b', rule: 'narrower-scope' };
  }
  const aa = a.authority >= AUTHORITATIVE;
  const ba = b.authority >= AUTHORITATIVE;
  if (aa !== ba) return { winner: aa ? 'a' : 'b', rule: 'authority' };
  const ta = Date.parse(a.validFrom);
  const tb = Date.parse(b.validFrom);
  if (Number.isFinite(ta) && Number.isFinite(tb) && ta !== tb) {
    return { winner: ta > tb ? 'a' : 'b', rule: 'later-valid' };
  }
  return { winner: null };
}

const byRank = (a: RecallItem, b: RecallItem): number => b.score - a.score || cmp(a.id, b.id);

type Edges = Map<number, Array<{ other: number; outcome: Outcome }>>;

/** Each conflicting pair of the ranked list, decided, from both ends. */
function conflictEdges(list: readonly RecallItem[]): Edges {
  const keys = list.map(keyed);
  const edges: Edges = new Map();
  for (let i = 0; i < list.length; i++) {
    for (let j = i + 1; j < list.length; j++) {
      if (!conflicts(keys[i]!, keys[j]!)) continue;
      const o = decide(list[i]!, list[j]!);
      const flipped: Outcome = o.winner === null ? o : { winner: o.winner === 'a' ? 'b' : 'a', rule: o.rule };
      (edges.get(i) ?? edges.set(i, []).get(i)!).push({ other: j, outcome: o });
      (edges.get(j) ?? edges.set(j, []).get(j)!).push({ other: i, outcome: flipped });
    }
  }
  return edges;
}

interface Survivors {
  readonly alive: ReadonlySet<number>;
  /** The items each winner overrode, with the rule. */
  readonly overrode: ReadonlyMap<number, ReadonlyArray<{ id: string; rule: PrecedenceRule }>>;
}

/** Drop losers one at a time, lowest-ranked first, while something still present beats them. */
function dropLosers(list: readonly RecallItem[], edges: Edges): Survivors {
  const alive = new Set(list.map((_, i) => i));
  const overrode = new Map<number, Array<{ id: string; rule: PrecedenceRule }>>();
  /** Who beats each item, best-ranked first (the list is in rank order, so index order). */
  const beaters = list.map((_, i) =>
    (edges.get(i) ?? [])
      .flatMap((e) => (e.outcome.winner === 'b' ? [{ by: e.other, rule: e.outcome.rule }] : []))
      .sort((x, y) => x.by - y.by),
  );
  /** How many of them are still present. */
  const live = beaters.map((b) => b.length);
  /** Whom each item beats, to update `live` when it is dropped. */
  const beats = list.map((): number[] => []);
  beaters.forEach((bs, i) => bs.forEach((b) => beats[b.by]!.push(i)));

  for (;;) {
    let loser = -1;
    for (let i = list.length - 1; i >= 0; i--) {
      if (alive.has(i) && live[i]! > 0) {
        loser = i;
        break;
      }
    }
    if (loser < 0) break;
    const best = beaters[loser]!.find((b) => alive.has(b.by))!;
    (overrode.get(best.by) ?? overrode.set(best.by, []).get(best.by)!).push({
      id: list[loser]!.id,
      rule: best.rule,
    });
    alive.delete(loser);
    for (const j of beats[loser]!) live[j]!--;
  }
  return { alive, overrode };
}

/**
 * Resolve conflicts among items: two items conflict when they state the same subject and predicate with
 * different objects (not for multi-valued predicates or episodic classes), or when CONTRADICTS links them.
 * Each conflicting pair is decided by `decide`. Losers are dropped one at a time, lowest-ranked first,
 * and only while something still present beats them, so a loser whose winner was itself overridden stays
 * and a cycle of wins keeps its highest-ranked member. The winner's `why.overrode` names each item it
 * overrode with the rule. Pairs no rule decides both stay, `contested: true`, each naming the other in
 * `why.contestedWith`. Items whose status is CONTESTED stay marked contested. Output is in rank order
 * (score descending, then id); a repeated id keeps its highest-ranked copy.
 */
export function resolvePrecedence<T extends RecallItem>(items: readonly T[]): T[] {
  const seen = new Set<string>();
  const list = [...items].sort(byRank).filter((i) => (seen.has(i.id) ? false : (seen.add(i.id), true)));
  const edges = conflictEdges(list);
  const { alive, overrode } = dropLosers(list, edges);

  const out: T[] = [];
  for (let i = 0; i < list.length; i++) {
    if (!alive.has(i)) continue;
    const item = list[i]!;
    const contestedWith = (edges.get(i) ?? [])
      .filter((e) => alive.has(e.other) && e.outcome.winner === null)
      .map((e) => list[e.other]!.id);
    const won = overrode.get(i) ?? [];
    if (contestedWith.length === 0 && won.length === 0) {
      out.push(item.status === 'CONTESTED' && !item.contested ? { ...item, contested: true } : item);
      continue;
    }
    out.push({
      ...item,
      contested: item.contested || item.status === 'CONTESTED' || contestedWith.length > 0,
      why: {
        ...item.why,
        overrode: [...item.why.overrode, ...won],
        contestedWith: [...new Set([...item.why.contestedWith, ...contestedWith])],
      },
    });
  }
  return out;
}
