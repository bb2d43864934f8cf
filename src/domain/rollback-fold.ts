import type { Compensation, EventOf, TaintMark } from './events.ts';
import { partiesOf } from './review.ts';
import type { Effect, ProjectionView, RecordState } from './projection-state.ts';
import { receiptOf } from './receipts.ts';
import { appendRevision, closeWith, currentRevision, sameStatement } from './revisions.ts';

/**
 * The fold of a `RolledBack` event. The plan (rollback-plan.ts) was computed by the write side and is
 * carried in the event, so this only applies data: each compensation opens a new revision (history is
 * kept, `record(asOf)` before the rollback answers as before) unless the record moved on since the plan
 * read it — then it is sent to review instead, never overwritten. Taints set a flag, not a status.
 */

export const TAINTED_FLAG = 'tainted';
export const ROLLBACK_REVIEW_FLAG = 'rollback:review';

export function rolledBack(view: ProjectionView, e: EventOf<'RolledBack'>): Effect {
  const changed = new Map<string, RecordState>();
  const get = (id: string) => changed.get(id) ?? view.record(e.tenant, id);
  const counts = { REVERT: 0, RESTORE: 0, REVIEW: 0, tainted: 0 };
  for (const c of e.payload.compensations) {
    const r = get(c.recordId);
    if (!r) continue;
    const next = compensate(r, c, e);
    counts[next.action] += 1;
    changed.set(r.id, next.record);
  }
  for (const t of e.payload.taints) {
    const r = get(t.recordId);
    if (!r) continue;
    changed.set(r.id, taint(r, t, e.eventId, e.recordedAt));
    counts.tainted += 1;
  }
  const summary =
    `reverted ${counts.REVERT}, restored ${counts.RESTORE}, sent to review ${counts.REVIEW}, ` +
    `tainted ${counts.tainted}: ${e.payload.reason}`;
  return {
    others: [...changed.values()],
    receipt: receiptOf(e, 'ROLLED_BACK', null, null, summary.slice(0, 2000)),
  };
}

function compensate(
  r: RecordState,
  c: Compensation,
  e: EventOf<'RolledBack'>,
): { record: RecordState; action: Compensation['action'] } {
  const cur = currentRevision(r);
  if (c.action === 'REVIEW' || !c.target) return { record: flagForReview(r, c.reason), action: 'REVIEW' };
  if (cur.version !== c.expectedVersion) {
    const why = `rollback ${e.payload.rollbackId}: changed since the rollback was planned (v${c.expectedVersion} → v${cur.version}); review instead of revert`;
    return { record: flagForReview(r, why), action: 'REVIEW' };
  }
  const t = c.target;
  // A reverted reclassification or move is undone with it: the record takes `from`'s class, label, namespace.
  const classified = t.classification ? { ...r, ...t.classification } : r;
  // Restored words take the vector the command computed for them (as a revise's new words do); without
  // one (an event from before rollbacks re-embedded, or no embedder) the record has none until it is
  // revised, so nothing matches it by a meaning it lost.
  const embedding = sameStatement(t.statement, cur.statement) ? r.embedding : t.embedding;
  const record = appendRevision(
    { ...classified, approvals: t.approvals, approvedAt: t.approvedAt, embedding },
    e.recordedAt,
    {
      version: cur.version + 1,
      statement: t.statement,
      status: t.status,
      validFrom: t.validFrom,
      validTo: t.validTo,
      eventId: e.eventId,
      changesetId: e.changesetId,
      reason: c.reason,
    },
  );
  return { record, action: c.action };
}

const withFlag = (flags: readonly string[], f: string): string[] =>
  flags.includes(f) ? [...flags] : [...flags, f];
const withReason = (reasons: readonly string[], why: string): string[] =>
  reasons.includes(why) ? [...reasons] : [...reasons, why].slice(-32);

function flagForReview(r: RecordState, why: string): RecordState {
  return {
    ...r,
    flags: withFlag(r.flags, ROLLBACK_REVIEW_FLAG),
    reviewReasons: withReason(r.reviewReasons, why.slice(0, 500)),
  };
}

/** Taints carried by an event (a rollback's or a retraction's) on the records they name that exist. */
export function taintAll(
  get: (id: string) => RecordState | undefined,
  taints: readonly TaintMark[],
  eventId: string,
  at: string,
): RecordState[] {
  return taints.flatMap((t) => {
    const r = get(t.recordId);
    return r ? [taint(r, t, eventId, at)] : [];
  });
}

function taint(r: RecordState, t: TaintMark, eventId: string, at: string): RecordState {
  return {
    ...r,
    flags: withFlag(r.flags, TAINTED_FLAG),
    reviewReasons: withReason(r.reviewReasons, t.reason.slice(0, 500)),
    taint: { path: t.path, reason: t.reason, eventId, at },
  };
}

/**
 * A record proposed as derived from a reverted or tainted record is born tainted: the path continues
 * from its source's. Read from the projected sources only (the projector loads them), so replay agrees.
 */
export function taintedAtBirth(
  view: ProjectionView,
  e: EventOf<'RecordProposed'>,
  record: RecordState,
): RecordState {
  const mark = inheritedTaint(view, e);
  return mark
    ? taint(record, { recordId: record.id, path: mark.path, reason: mark.reason }, e.eventId, e.recordedAt)
    : record;
}

function inheritedTaint(
  view: ProjectionView,
  e: EventOf<'RecordProposed'>,
): { path: string[]; reason: string } | null {
  for (const id of [...e.payload.derivedFrom].sort()) {
    const src = view.record(e.tenant, id);
    if (!src) continue;
    const path = src.taint
      ? [...src.taint.path, e.payload.recordId]
      : currentRevision(src).status === 'REVERTED'
        ? [src.id, e.payload.recordId]
        : null;
    if (path) return { path, reason: `derived from ${src.taint ? 'tainted' : 'reverted'} record ${src.id}` };
  }
  return null;
}

/** Whether a rollback left the record waiting for a reviewer: tainted, or changed since and not reverted. */
export const flaggedForReview = (r: { readonly flags: readonly string[] }): boolean =>
  r.flags.includes(TAINTED_FLAG) || r.flags.includes(ROLLBACK_REVIEW_FLAG);

/**
 * A reviewer's approval of a record a rollback flagged: it stands. The flags, the taint and the review
 * reasons go (it no longer waits for review); one revision records who decided and, when it was tainted,
 * the path it had, so the history keeps why it was queued. Text, status and validity are unchanged.
 */
export function keptAfterReview(r: RecordState, e: EventOf<'ProposalApproved'>): Effect {
  const [by] = partiesOf(e.principal, e.actors);
  const was = r.taint ? `tainted via ${r.taint.path.join(' → ')}` : 'sent to review by a rollback';
  const unflagged: RecordState = {
    ...r,
    flags: r.flags.filter((f) => f !== TAINTED_FLAG && f !== ROLLBACK_REVIEW_FLAG),
    reviewReasons: [],
    taint: null,
  };
  const reason = `kept after review by ${by!.slice(by!.indexOf('|') + 1)} (${was})`.slice(0, 2000);
  const { record, version } = closeWith(unflagged, e, currentRevision(r).status, reason);
  return { record, receipt: receiptOf(e, 'ADMITTED', r.id, version, 'kept after review') };
}
