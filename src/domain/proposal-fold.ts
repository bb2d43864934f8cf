import { readableWherever } from './access.ts';
import type { EventOf, LedgerEvent } from './events.ts';
import type { Outcome, RecordStatus } from './model.ts';
import { approversRequired, decideApproval, describeApproval, partiesOf, type Approval } from './review.ts';
import {
  NO_FEEDBACK,
  proposedRelation,
  type Effect,
  type ProjectionView,
  type RecordState,
  type RelationState,
  type RevisionState,
} from './projection-state.ts';
import { receiptOf } from './receipts.ts';
import { guard } from './record-fold.ts';
import { flaggedForReview, keptAfterReview, taintedAtBirth } from './rollback-fold.ts';
import { appendRevision, closeWith, currentRevision } from './revisions.ts';

/** A proposal's way in: proposed (active or waiting for review), then approved or rejected. */

export function proposed(view: ProjectionView, e: EventOf<'RecordProposed'>): Effect {
  const p = e.payload;
  if (view.record(e.tenant, p.recordId)) {
    return { receipt: receiptOf(e, 'REJECTED', p.recordId, null, 'record id already exists') };
  }
  const target = p.relation ? view.record(e.tenant, p.relation.target) : undefined;
  const record: RecordState = taintedAtBirth(view, e, newRecord(view, e, target));
  if (p.status === 'CANDIDATE')
    return { record, receipt: receiptOf(e, 'QUEUED', p.recordId, 1, p.reviewReasons.join('; ') || null) };
  const act = activate(record, target, e);
  return {
    record: act.record,
    others: act.others,
    receipt: receiptOf(e, act.outcome, p.recordId, currentRevision(act.record).version, act.reason),
  };
}

function newRecord(
  view: ProjectionView,
  e: EventOf<'RecordProposed'>,
  target: RecordState | undefined,
): RecordState {
  const p = e.payload;
  const relations: RelationState[] =
    p.relation && target
      ? [
          {
            type: p.relation.kind,
            target: p.relation.target,
            confidence: p.relation.confidence,
            reason: p.relation.reason,
            eventId: e.eventId,
            recordedAt: e.recordedAt,
          },
        ]
      : [];
  return {
    tenant: e.tenant,
    id: p.recordId,
    namespace: e.namespace,
    class: p.class,
    sensitivity: p.sensitivity,
    confidence: p.confidence,
    timeSource: p.timeSource,
    rationale: p.rationale,
    // Like a relation to a record not yet known, an entity not yet known is not what the record is about:
    // a producer's retry can land a proposal before its request's own EntityCreated. Keeping the id would
    // make the graph depend on where the projector's batches end (the ABOUT edge exists only if the
    // entity was written first; test/int/projection-batches.test.ts).
    about: p.about.filter((id) => view.entity(e.tenant, id) !== undefined),
    sources: p.sources,
    ext: p.ext,
    createdAt: e.recordedAt,
    proposedBy: `${e.principal.iss}|${e.principal.sub}`,
    proposedVia: partiesOf(e.principal, e.actors).slice(1),
    approvals: [],
    approvedAt: null,
    revisions: [firstRevision(e)],
    relations,
    reviewReasons: p.reviewReasons,
    flags: p.flags,
    embedding: p.embedding,
    episodeId: p.episodeId,
    reinforcements: 0,
    feedback: NO_FEEDBACK,
    votes: {},
    derivedFrom: p.derivedFrom,
  };
}

const firstRevision = (e: EventOf<'RecordProposed'>): RevisionState => ({
  version: 1,
  statement: e.payload.statement,
  status: e.payload.status,
  validFrom: e.payload.validFrom,
  validTo: e.payload.validTo,
  recordedAt: e.recordedAt,
  retiredAt: null,
  changesetId: e.changesetId,
  eventId: e.eventId,
  reason: null,
});

/**
 * A record becomes active (at proposal or approval): its relate decision takes effect. SUPERSEDES closes
 * the target's validity and marks it SUPERSEDED; CONTRADICTS marks both CONTESTED; EXTENDS only links.
 *
 * What a mark reveals: a side is marked (superseded, contested) only when everyone who may read it may
 * read the other side too (`readableWherever`, from the two records' namespaces and labels alone, so a
 * replay decides the same). Otherwise the relation is kept — listed to those who may read both, whose
 * recall still sees the conflict — but that side's status says nothing about a record its readers
 * cannot see. A supersede the target's readers may not learn of marks nothing.
 */
function activate(
  record: RecordState,
  target: RecordState | undefined,
  e: LedgerEvent,
): { record: RecordState; others: RecordState[]; outcome: Outcome; reason: string | null } {
  const rel = proposedRelation(record);
  const live = (r: RecordState) => ['ACTIVE', 'CONTESTED'].includes(currentRevision(r).status);
  if (!rel || !target || !live(target)) return { record, others: [], outcome: 'ADMITTED', reason: null };
  const t = currentRevision(target);
  const targetMayLearn = readableWherever(record, target);
  if (rel.type === 'SUPERSEDES' && targetMayLearn) {
    const from = currentRevision(record).validFrom;
    const closeAt = from > t.validFrom ? from : t.validFrom;
    const validTo = t.validTo !== null && t.validTo < closeAt ? t.validTo : closeAt;
    const closed = appendRevision(target, e.recordedAt, {
      ...t,
      version: t.version + 1,
      status: 'SUPERSEDED',
      validTo,
      eventId: e.eventId,
      changesetId: e.changesetId,
      reason: `superseded by ${record.id}`,
    });
    return { record, others: [closed], outcome: 'SUPERSEDED', reason: rel.reason };
  }
  if (rel.type === 'CONTRADICTS') {
    const recordMayLearn = readableWherever(target, record);
    if (!recordMayLearn && !targetMayLearn)
      return { record, others: [], outcome: 'ADMITTED', reason: rel.reason };
    const mine = recordMayLearn ? appendInPlaceStatus(record, 'CONTESTED') : record;
    const others =
      t.status === 'CONTESTED' || !targetMayLearn
        ? []
        : [closeWith(target, e, 'CONTESTED', `contradicted by ${record.id}`).record];
    return { record: mine, others, outcome: 'CONTESTED', reason: rel.reason };
  }
  return { record, others: [], outcome: 'ADMITTED', reason: rel.reason };
}

/** Sets the status of the newest revision when it is being created by this very event (no history to keep). */
function appendInPlaceStatus(record: RecordState, status: RecordStatus): RecordState {
  const revs = record.revisions.slice(0, -1);
  return { ...record, revisions: [...revs, { ...currentRevision(record), status }] };
}

function candidateGuard(
  view: ProjectionView,
  e: EventOf<'ProposalApproved'> | EventOf<'ProposalRejected'>,
): { record: RecordState; current: RevisionState } | { rejected: Effect } {
  const g = guard(view, e);
  if ('rejected' in g) return g;
  if (g.current.status !== 'CANDIDATE') {
    const why = `proposal is ${g.current.status}, not waiting for review`;
    return { rejected: { receipt: receiptOf(e, 'CONFLICT', e.payload.recordId, g.current.version, why) } };
  }
  return g;
}

/**
 * An approval under separation of duties (review.ts): a party to the proposal cannot approve where the
 * rules ask for another reviewer, nor can one reviewer count twice; short of the approvers needed it is
 * recorded on the record (no new revision, the record stays CANDIDATE); the last one activates it and
 * records when it was approved.
 */
export function approved(view: ProjectionView, e: EventOf<'ProposalApproved'>): Effect {
  const flagged = guard(view, e);
  if (!('rejected' in flagged) && flagged.current.status !== 'CANDIDATE' && flaggedForReview(flagged.record))
    return approvedFlagged(flagged, e);
  const g = candidateGuard(view, e);
  if ('rejected' in g) return g.rejected;
  const [by, ...via] = partiesOf(e.principal, e.actors);
  const approval: Approval = { by: by!, via, at: e.recordedAt, eventId: e.eventId };
  const required = approversRequired(e.payload.required, g.record);
  const d = decideApproval(
    [g.record.proposedBy, ...g.record.proposedVia],
    g.record.approvals,
    approval,
    required,
  );
  const id = e.payload.recordId;
  if (d.kind === 'SELF')
    return { receipt: receiptOf(e, 'REJECTED', id, g.current.version, describeApproval(d)) };
  if (d.kind === 'AGAIN')
    return { receipt: receiptOf(e, 'DUPLICATE', id, g.current.version, describeApproval(d)) };
  const approvals = [...g.record.approvals, approval];
  if (d.kind === 'PARTIAL') {
    return {
      record: { ...g.record, approvals },
      receipt: receiptOf(e, 'QUEUED', id, g.current.version, describeApproval(d)),
    };
  }
  return activateApproved(view, e, g, approvals);
}

/** A record a rollback flagged for review (rollback-fold.ts): approved under the same rules, it stays as it is. */
function approvedFlagged(
  flagged: { record: RecordState; current: RevisionState },
  e: EventOf<'ProposalApproved'>,
): Effect {
  const [by, ...via] = partiesOf(e.principal, e.actors);
  const required = approversRequired(e.payload.required, flagged.record);
  const d = decideApproval(
    [flagged.record.proposedBy, ...flagged.record.proposedVia],
    [],
    { by: by!, via },
    required,
  );
  if (d.kind === 'SELF')
    return {
      receipt: receiptOf(e, 'REJECTED', e.payload.recordId, flagged.current.version, describeApproval(d)),
    };
  return keptAfterReview(flagged.record, e);
}

/** The last approval needed: the record becomes ACTIVE, and its relate decision takes effect. */
function activateApproved(
  view: ProjectionView,
  e: EventOf<'ProposalApproved'>,
  g: { record: RecordState; current: RevisionState },
  approvals: readonly Approval[],
): Effect {
  const opened = appendRevision({ ...g.record, approvals, approvedAt: e.recordedAt }, e.recordedAt, {
    ...g.current,
    version: g.current.version + 1,
    status: 'ACTIVE',
    eventId: e.eventId,
    changesetId: e.changesetId,
    reason: `approved by ${approvals.map((a) => a.by.slice(a.by.indexOf('|') + 1)).join(', ')}`,
  });
  const rel = proposedRelation(opened);
  const act = activate(opened, rel ? view.record(e.tenant, rel.target) : undefined, e);
  const version = currentRevision(act.record).version;
  return {
    record: act.record,
    others: act.others,
    receipt: receiptOf(e, act.outcome, e.payload.recordId, version, act.reason),
  };
}

export function rejected(view: ProjectionView, e: EventOf<'ProposalRejected'>): Effect {
  const g = candidateGuard(view, e);
  if ('rejected' in g) return g.rejected;
  const { record, version } = closeWith(g.record, e, 'REJECTED', e.payload.reason);
  return { record, receipt: receiptOf(e, 'REJECTED', e.payload.recordId, version, e.payload.reason) };
}
