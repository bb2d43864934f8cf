import { covers } from './access.ts';
import { MUNINN_NS, uuidV5 } from './canonical.ts';
import type { GrantState } from './projection-state.ts';
import { sameIdentifierSet } from './identifiers.ts';
import type { FindingDraft, FindingSeverity, FindingType, GrantRole } from './stewardship-model.ts';

/**
 * Stewardship (issue #14), pure: who owns and stewards a namespace (from grants), and what the steward
 * checks find in the rows the graph gives them. lifecycle/steward.ts reads the rows and appends the
 * findings; nothing here reads a clock (`now` is passed in).
 */

const DAY_MS = 86_400_000;

export interface StewardThresholds {
  /** A contested pair older than this many days is a finding. */
  readonly contestedDays: number;
  /** A proposal waiting longer than this many days is a finding. */
  readonly candidateDays: number;
  /** Two live records of a namespace whose embeddings' cosine is at least this are near-duplicates. */
  readonly duplicateCosine: number;
  /** A record whose utility is at or below this (with enough votes) has low utility. */
  readonly lowUtility: number;
  /** Votes a record needs before its utility is judged. */
  readonly lowUtilityMinVotes: number;
}

export const DEFAULT_STEWARD_THRESHOLDS: StewardThresholds = {
  contestedDays: 14,
  candidateDays: 7,
  duplicateCosine: 0.97,
  lowUtility: -0.2,
  lowUtilityMinVotes: 3,
};

/** The same situation is the same finding: the id is derived from the tenant, the type and the sorted ids. */
export const findingIdOf = (tenant: string, type: FindingType, ids: readonly string[]): string =>
  uuidV5(`finding|${tenant}|${type}|${[...ids].sort().join(',')}`, MUNINN_NS);

function draft(
  tenant: string,
  type: FindingType,
  severity: FindingSeverity,
  namespace: string,
  ids: { records?: readonly string[]; entities?: readonly string[] },
  reason: string,
): FindingDraft {
  const recordIds = [...(ids.records ?? [])].sort();
  const entityIds = [...(ids.entities ?? [])].sort();
  const id = findingIdOf(tenant, type, [...recordIds, ...entityIds]);
  return { id, type, severity, namespace, recordIds, entityIds, reason };
}

const daysBetween = (from: string, now: Date): number =>
  Math.floor((now.getTime() - Date.parse(from)) / DAY_MS);

/** A live record with its validity end and its `ext["muninn:reviewBy"]`, if any. */
export interface StaleRow {
  readonly id: string;
  readonly namespace: string;
  readonly class: string;
  readonly validTo: string | null;
  readonly reviewBy: string | null;
}

/** Past its validity (validTo) — HIGH for a norm or constraint agents act on — or past its review date. */
export function staleFindings(tenant: string, rows: readonly StaleRow[], now: Date): FindingDraft[] {
  const t = now.toISOString();
  const out: FindingDraft[] = [];
  for (const r of rows) {
    const expired = r.validTo !== null && r.validTo <= t;
    const overdue = r.reviewBy !== null && r.reviewBy <= t;
    if (!expired && !overdue) continue;
    const binding = r.class === 'NORMATIVE' || r.class === 'CONSTRAINT';
    const reason = expired
      ? `still live after its validity ended (validTo ${r.validTo})`
      : `not reviewed by ${r.reviewBy}`;
    out.push(draft(tenant, 'STALE', binding ? 'HIGH' : 'MEDIUM', r.namespace, { records: [r.id] }, reason));
  }
  return out;
}

/** Two records that contest each other, and since when (the CONTRADICTS relation's time). */
export interface ContestedRow {
  readonly a: string;
  readonly b: string;
  readonly namespace: string;
  readonly since: string;
}

export function contestedFindings(
  tenant: string,
  rows: readonly ContestedRow[],
  now: Date,
  th: StewardThresholds,
): FindingDraft[] {
  return rows
    .filter((r) => daysBetween(r.since, now) >= th.contestedDays)
    .map((r) => {
      const days = daysBetween(r.since, now);
      const severity = days >= 2 * th.contestedDays ? 'HIGH' : 'MEDIUM';
      const reason = `contested for ${days} days (since ${r.since})`;
      return draft(tenant, 'CONTESTED_PAIR', severity, r.namespace, { records: [r.a, r.b] }, reason);
    });
}

/** An entity that records were about, none of them live now; `namespaces` are those records'. */
export interface OrphanRow {
  readonly entityId: string;
  readonly namespaces: readonly string[];
}

/** The deepest namespace containing all of `ns` (the finding belongs to whoever stewards them all). */
export function commonNamespace(ns: readonly string[]): string | null {
  if (ns.length === 0) return null;
  let parts = ns[0]!.split('/');
  for (const n of ns.slice(1)) {
    const other = n.split('/');
    let i = 0;
    while (i < parts.length && parts[i] === other[i]) i++;
    parts = parts.slice(0, i);
  }
  return parts.length ? parts.join('/') : null;
}

export function orphanFindings(tenant: string, rows: readonly OrphanRow[]): FindingDraft[] {
  const out: FindingDraft[] = [];
  for (const r of rows) {
    // Entities of records across top-level namespaces have no one steward: the tenant's admins see them.
    const ns = commonNamespace(r.namespaces) ?? r.namespaces[0];
    if (!ns) continue;
    const reason = `no live record is about it (${r.namespaces.length} namespace(s) had records about it)`;
    out.push(draft(tenant, 'ORPHAN_ENTITY', 'LOW', ns, { entities: [r.entityId] }, reason));
  }
  return out;
}

/** Two live records of one namespace and the cosine of their embeddings. */
export interface DuplicateRow {
  readonly a: string;
  readonly b: string;
  readonly namespace: string;
  readonly cosine: number;
  /**
   * Both statements (subject, object and wording), when known: a pair naming other identifiers is two
   * things however alike its embeddings ("ledger writer 1ad620" and "ledger writer 98b1f6").
   */
  readonly texts?: readonly [string, string];
}

export function duplicateFindings(
  tenant: string,
  rows: readonly DuplicateRow[],
  th: StewardThresholds,
): FindingDraft[] {
  const seen = new Set<string>();
  const out: FindingDraft[] = [];
  for (const r of rows) {
    const key = [r.a, r.b].sort().join('|');
    if (r.a === r.b || r.cosine < th.duplicateCosine || seen.has(key)) continue;
    if (r.texts && !sameIdentifierSet(r.texts[0], r.texts[1])) continue;
    seen.add(key);
    const reason = `embeddings ${r.cosine.toFixed(3)} alike (threshold ${th.duplicateCosine})`;
    out.push(draft(tenant, 'NEAR_DUPLICATE', 'LOW', r.namespace, { records: [r.a, r.b] }, reason));
  }
  return out;
}

/** A proposal waiting for review, since it was proposed. */
export interface CandidateRow {
  readonly id: string;
  readonly namespace: string;
  readonly createdAt: string;
}

export function candidateFindings(
  tenant: string,
  rows: readonly CandidateRow[],
  now: Date,
  th: StewardThresholds,
): FindingDraft[] {
  return rows
    .filter((r) => daysBetween(r.createdAt, now) >= th.candidateDays)
    .map((r) => {
      const days = daysBetween(r.createdAt, now);
      const severity = days >= 2 * th.candidateDays ? 'HIGH' : 'MEDIUM';
      const reason = `waiting for review for ${days} days (proposed ${r.createdAt})`;
      return draft(tenant, 'CANDIDATE_WAITING', severity, r.namespace, { records: [r.id] }, reason);
    });
}

/** A live record's recall feedback. */
export interface UtilityRow {
  readonly id: string;
  readonly namespace: string;
  readonly utility: number;
  readonly votes: number;
  readonly wrong: number;
}

export function lowUtilityFindings(
  tenant: string,
  rows: readonly UtilityRow[],
  th: StewardThresholds,
): FindingDraft[] {
  return rows
    .filter((r) => r.votes >= th.lowUtilityMinVotes && r.utility <= th.lowUtility)
    .map((r) => {
      const severity = r.wrong * 2 > r.votes ? 'HIGH' : 'MEDIUM';
      const reason = `utility ${r.utility} from ${r.votes} votes (${r.wrong} wrong; threshold ${th.lowUtility})`;
      return draft(tenant, 'LOW_UTILITY', severity, r.namespace, { records: [r.id] }, reason);
    });
}

/**
 * What a run does, given what it found and the findings open now: raise the new ones (an open one is
 * never raised twice), resolve the open ones that no longer hold — only of the types this run checked.
 */
export function planFindings(
  found: readonly FindingDraft[],
  open: ReadonlyArray<{ readonly id: string; readonly type: FindingType }>,
  checked: ReadonlySet<FindingType>,
): { raise: FindingDraft[]; resolve: string[] } {
  const openIds = new Set(open.map((f) => f.id));
  const foundIds = new Set(found.map((f) => f.id));
  const raise = [...new Map(found.filter((f) => !openIds.has(f.id)).map((f) => [f.id, f])).values()];
  const resolve = open.filter((f) => checked.has(f.type) && !foundIds.has(f.id)).map((f) => f.id);
  return { raise, resolve };
}

/** One person or agent with a role over a namespace, through which grant. */
export interface StewardRef {
  readonly principal: string;
  readonly role: GrantRole;
  readonly grantId: string;
  /** The grant's subtree: the namespace itself or an ancestor. */
  readonly namespace: string;
}

/**
 * Owners and stewards of a namespace, as data: the live grants with role OWNER (owners) and with role
 * OWNER or STEWARD (stewards: an owner stewards too) on the namespace or an ancestor, nearest first.
 */
export function stewardshipOf(
  grants: readonly GrantState[],
  namespace: string,
): { owners: StewardRef[]; stewards: StewardRef[] } {
  const held = grants
    .filter((g) => g.revokedAt === null && (g.role === 'OWNER' || g.role === 'STEWARD'))
    .filter((g) => covers(g.namespace, namespace))
    .sort((x, y) => y.namespace.length - x.namespace.length || x.grantee.localeCompare(y.grantee))
    .map((g) => ({ principal: g.grantee, role: g.role!, grantId: g.id, namespace: g.namespace }));
  return { owners: held.filter((r) => r.role === 'OWNER'), stewards: held };
}
