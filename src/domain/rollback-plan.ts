import type { Compensation, TaintMark } from './events.ts';
import type { RecordState, RevisionState } from './projection-state.ts';
import type { Classification } from './reclassify.ts';
import { currentRevision } from './revisions.ts';

/**
 * Planning a rollback, pure: given the records the reverted events touched (with their whole history)
 * and the ids of those events, decide each record's compensation; given the derivation edges around the
 * compensated records, decide what is tainted. The write side runs this at request time and appends
 * the result in ONE `RolledBack` event; the fold (rollback-fold.ts) only applies it, so a replay
 * reproduces the same state without planning again.
 */

/** Event types whose revisions are a person's decision: never overwritten by someone else's rollback. */
const HUMAN_CAUSES: ReadonlySet<string> = new Set([
  'RecordRevised',
  'RecordRetracted',
  'ProposalApproved',
  'ProposalRejected',
  'RolledBack',
]);

/** The prefix of a provenance node in a taint path: the record cites a reverted episode. */
export const EPISODE_NODE = 'episode:';

export function planCompensations(
  records: readonly RecordState[],
  reverted: ReadonlySet<string>,
  reason: string,
): Compensation[] {
  return [...records]
    .sort((a, b) => a.id.localeCompare(b.id))
    .map((r) => planRecord(r, reverted, reason))
    .filter((c): c is Compensation => c !== null);
}

function planRecord(r: RecordState, reverted: ReadonlySet<string>, reason: string): Compensation | null {
  const revs = r.revisions;
  const cur = currentRevision(r);
  const i0 = revs.findIndex((v) => reverted.has(v.eventId));
  const hitApprovals = r.approvals.filter((a) => reverted.has(a.eventId));
  // Erased content is never brought back; nothing here was touched by the reverted events.
  if (cur.status === 'ERASED' || (i0 < 0 && hitApprovals.length === 0)) return null;
  const since = i0 >= 0 ? revs[i0]!.recordedAt : hitApprovals.map((a) => a.at).sort()[0]!;
  const revertedBy = new Set<string>([
    ...revs.filter((v) => reverted.has(v.eventId)).flatMap((v) => (v.by ? [v.by] : [])),
    ...hitApprovals.map((a) => a.by),
  ]);
  const base = { recordId: r.id, expectedVersion: cur.version };
  const later = laterChange(r, reverted, i0, since, revertedBy);
  if (later)
    return {
      ...base,
      action: 'REVIEW',
      target: null,
      reason: `rollback (${reason}): ${later} after the reverted change; review instead of revert`,
    };
  const approvals = r.approvals
    .filter((a) => !reverted.has(a.eventId))
    .map((a) => ({ ...a, via: [...a.via] }));
  const approvedAt = r.approvedAt && approvals.some((a) => a.at === r.approvedAt) ? r.approvedAt : null;
  const from: RevisionState = i0 > 0 ? revs[i0 - 1]! : cur;
  const revert = i0 === 0;
  return {
    ...base,
    action: revert ? 'REVERT' : 'RESTORE',
    target: {
      statement: { ...from.statement },
      status: revert ? 'REVERTED' : from.status,
      validFrom: from.validFrom,
      validTo: from.validTo,
      approvals,
      approvedAt,
      classification: revert ? null : restoredClassification(r, from),
      embedding: null,
    },
    reason: revert ? `reverted by rollback: ${reason}` : `restored v${from.version} by rollback: ${reason}`,
  };
}

/**
 * The class, label and namespace `from` had, when they differ from the record's now (the reverted events
 * reclassified or moved it); null when they are the same or `from` was projected before they were stamped.
 */
function restoredClassification(r: RecordState, from: RevisionState): Classification | null {
  const c = from.classification;
  if (!c) return null;
  const same = c.class === r.class && c.sensitivity === r.sensitivity && c.namespace === r.namespace;
  return same ? null : { class: c.class, sensitivity: c.sensitivity, namespace: c.namespace };
}

/** A change after the reverted one, by another person, that a revert would silently undo; null if none. */
function laterChange(
  r: RecordState,
  reverted: ReadonlySet<string>,
  i0: number,
  since: string,
  revertedBy: ReadonlySet<string>,
): string | null {
  const other = (by: string | null | undefined) => !by || !revertedBy.has(by);
  const revs = i0 >= 0 ? r.revisions.slice(i0 + 1) : r.revisions.filter((v) => v.recordedAt > since);
  for (const v of revs) {
    if (reverted.has(v.eventId)) continue;
    // A revision projected before causes were stamped cannot be told apart: treat it as a person's.
    const human = v.cause === undefined || v.cause === null || HUMAN_CAUSES.has(v.cause);
    if (human && other(v.by)) return `v${v.version} (${v.cause ?? 'a change'} by ${v.by ?? 'someone'})`;
  }
  const approval = r.approvals.find((a) => !reverted.has(a.eventId) && a.at > since && other(a.by));
  return approval ? `an approval by ${approval.by}` : null;
}

/** A derivation edge: `from` derives from `to` (DERIVED_FROM, SUPERSEDES, or citing episode node `to`). */
export interface DerivationEdge {
  readonly from: string;
  readonly to: string;
}

/**
 * Breadth-first from the seeds (compensated records, reverted episodes) against the edges: every record
 * reached is tainted with its shortest path (ties broken by id, so the plan is the same on every run).
 * `exclude`: records the rollback itself compensates (or the retracted record itself).
 */
export function planTaints(
  seeds: readonly string[],
  edges: readonly DerivationEdge[],
  exclude: ReadonlySet<string>,
  reason: string,
  maxDepth = 63,
  /** What happened to the source, as the reason says it. */
  how = `reverted by rollback (${reason})`,
): TaintMark[] {
  const incoming = new Map<string, string[]>();
  for (const e of edges) incoming.set(e.to, [...(incoming.get(e.to) ?? []), e.from]);
  const paths = new Map<string, string[]>();
  const queue = [...new Set(seeds)].sort();
  for (const s of queue) paths.set(s, [s]);
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!;
    const path = paths.get(node)!;
    if (path.length > maxDepth) continue;
    for (const child of [...new Set(incoming.get(node) ?? [])].sort()) {
      if (paths.has(child) || exclude.has(child) || child.startsWith(EPISODE_NODE)) continue;
      paths.set(child, [...path, child]);
      queue.push(child);
    }
  }
  return [...paths.entries()]
    .filter(([, p]) => p.length >= 2)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([recordId, path]) => ({
      recordId,
      path,
      reason: `tainted: derived from ${path[0]!}, ${how}; path ${path.join(' → ')}`.slice(0, 2000),
    }));
}
