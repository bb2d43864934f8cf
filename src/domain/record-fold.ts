import type { EventOf, LedgerEvent } from './events.ts';
import type { RecordStatus, SourceSpan } from './model.ts';
import type { Effect, ProjectionView, RecordState, RevisionState } from './projection-state.ts';
import { receiptOf } from './receipts.ts';
import { reclassify } from './reclassify.ts';
import { taintAll } from './rollback-fold.ts';
import { appendRevision, closeWith, currentRevision, sameStatement } from './revisions.ts';

/** Changes to an existing record: revised, retracted, archived, reinforced. */

/** Guards every change to an existing record: it must exist in this tenant and match expectedVersion. */
export function guard(
  view: ProjectionView,
  e: LedgerEvent & { payload: { recordId: string; expectedVersion: number } },
): { record: RecordState; current: RevisionState } | { rejected: Effect } {
  const { recordId, expectedVersion } = e.payload;
  const record = view.record(e.tenant, recordId);
  if (!record) return { rejected: { receipt: receiptOf(e, 'REJECTED', recordId, null, 'record not found') } };
  const current = currentRevision(record);
  if (current.version !== expectedVersion) {
    return {
      rejected: {
        receipt: receiptOf(
          e,
          'CONFLICT',
          recordId,
          current.version,
          `expected version ${expectedVersion}, current version is ${current.version}`,
        ),
      },
    };
  }
  if (current.status === 'RETRACTED' || current.status === 'ERASED' || current.status === 'REVERTED') {
    return {
      rejected: {
        receipt: receiptOf(e, 'REJECTED', recordId, current.version, `record is ${current.status}`),
      },
    };
  }
  return { record, current };
}

export function revised(view: ProjectionView, e: EventOf<'RecordRevised'>): Effect {
  const g = guard(view, e);
  if ('rejected' in g) return g.rejected;
  const p = e.payload;
  const validTo = p.validTo === null ? g.current.validTo : typeof p.validTo === 'string' ? p.validTo : null;
  const validFrom = p.validFrom ?? g.current.validFrom;
  if (validTo !== null && validTo <= validFrom) {
    return {
      receipt: receiptOf(e, 'REJECTED', p.recordId, g.current.version, 'validTo must be after validFrom'),
    };
  }
  const version = g.current.version + 1;
  const restated = p.statement !== null && !sameStatement(p.statement, g.current.statement);
  // An approval covers the text the reviewers read: new text is no longer approved (nor partly approved).
  // New text carries the vector the revise computed for it (null where the embedder gave none): relate and
  // the vector arm compare what the record says now, never the words it replaced.
  const base: RecordState = restated
    ? { ...g.record, approvals: [], approvedAt: null, embedding: p.embedding }
    : g.record;
  const rc = reclassify({
    current: { ...g.record, status: g.current.status },
    change: p,
    principal: e.principal,
    actors: e.actors,
  });
  const moved: RecordState = { ...base, ...rc.next };
  const reclassed: RecordState = rc.review
    ? {
        ...moved,
        approvals: [],
        approvedAt: null,
        proposedVia: rc.review.proposedVia,
        reviewReasons: [rc.review.reason],
      }
    : moved;
  const record = appendRevision(reclassed, e.recordedAt, {
    version,
    statement: p.statement ?? g.current.statement,
    status: rc.review?.status ?? g.current.status,
    validFrom,
    validTo,
    changesetId: e.changesetId,
    eventId: e.eventId,
    reason: rc.summary ?? p.reason,
  });
  const outcome = rc.review ? 'QUEUED' : 'REVISED';
  return { record, receipt: receiptOf(e, outcome, p.recordId, version, rc.review?.reason ?? rc.summary) };
}

export function retracted(view: ProjectionView, e: EventOf<'RecordRetracted'>): Effect {
  const g = guard(view, e);
  if ('rejected' in g) return g.rejected;
  const { record, version } = closeWith(g.record, e, 'RETRACTED', e.payload.reason);
  // Records derived from it are tainted with it (the write side walked the derivations; see retract.ts).
  const others = taintAll((id) => view.record(e.tenant, id), e.payload.taints, e.eventId, e.recordedAt);
  return {
    record,
    ...(others.length > 0 ? { others } : {}),
    receipt: receiptOf(e, 'RETRACTED', e.payload.recordId, version, e.payload.reason),
  };
}

/** Retention archives live knowledge only: a candidate waits for review, a retracted record stays so. */
const ARCHIVABLE: readonly RecordStatus[] = ['ACTIVE', 'CONTESTED', 'SUPERSEDED'];

export function archived(view: ProjectionView, e: EventOf<'RecordArchived'>): Effect {
  const g = guard(view, e);
  if ('rejected' in g) return g.rejected;
  const { recordId, reason } = e.payload;
  if (!ARCHIVABLE.includes(g.current.status))
    return {
      receipt: receiptOf(e, 'REJECTED', recordId, g.current.version, `record is ${g.current.status}`),
    };
  const { record, version } = closeWith(g.record, e, 'ARCHIVED', reason);
  return { record, receipt: receiptOf(e, 'ARCHIVED', recordId, version, reason) };
}

export function reinforced(view: ProjectionView, e: EventOf<'RecordReinforced'>): Effect {
  const p = e.payload;
  const r = view.record(e.tenant, p.recordId);
  if (!r) return { receipt: receiptOf(e, 'REJECTED', p.recordId, null, 'record not found') };
  const cur = currentRevision(r);
  if (['RETRACTED', 'REJECTED', 'ERASED', 'SUPERSEDED', 'REVERTED'].includes(cur.status)) {
    return { receipt: receiptOf(e, 'REJECTED', p.recordId, cur.version, `record is ${cur.status}`) };
  }
  // Provenance is a set union; confidence only goes up. The claim itself is unchanged: no new revision.
  const key = (x: SourceSpan) => `${x.episodeId}|${x.start}|${x.end}|${x.label ?? ''}`;
  const seen = new Set(r.sources.map(key));
  const added = p.sources.filter((x) => !seen.has(key(x)));
  const record: RecordState = {
    ...r,
    sources: [...r.sources, ...added],
    confidence: Math.max(r.confidence, p.confidence),
    reinforcements: r.reinforcements + 1,
  };
  return { record, receipt: receiptOf(e, 'REINFORCED', p.recordId, cur.version, p.reason) };
}
