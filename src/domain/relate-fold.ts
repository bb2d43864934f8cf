import type { EventOf } from './events.ts';
import type { Effect, ProjectionView, RelationState } from './projection-state.ts';
import { currentRevision } from './revisions.ts';
import { receiptOf } from './receipts.ts';

/**
 * Statuses a relation may not start from: the record is withdrawn (by a person, or undone by a rollback)
 * or its content gone.
 */
const DEAD = ['RETRACTED', 'REJECTED', 'REVERTED', 'ERASED'];

/**
 * An explicit typed relation (`relate`, relations.ts). It is an edge, not a revision: the record's
 * statement, status and version stay. One edge per (type, target): relating again replaces its
 * confidence, validity and reason (the graph MERGEs the same edge), so a relation is ended by relating it
 * again with a validTo. The write side checked that the caller sees both ends and writes the source's
 * namespace; the fold re-checks only what the projection knows (both ends exist and are not withdrawn).
 */
export function related(view: ProjectionView, e: EventOf<'RecordRelated'>): Effect {
  const p = e.payload;
  const reject = (why: string, version: number | null) =>
    ({ receipt: receiptOf(e, 'REJECTED', p.recordId, version, why) }) satisfies Effect;
  const r = view.record(e.tenant, p.recordId);
  if (!r) return reject('record not found', null);
  const version = currentRevision(r).version;
  if (DEAD.includes(currentRevision(r).status))
    return reject(`record is ${currentRevision(r).status}`, version);
  if (p.targetKind === 'ENTITY') {
    if (!view.entity(e.tenant, p.target)) return reject('target entity not found', version);
  } else {
    const t = view.record(e.tenant, p.target);
    if (!t) return reject('target record not found', version);
    if (currentRevision(t).status === 'ERASED') return reject('target record is ERASED', version);
  }
  const rel: RelationState = {
    type: p.type,
    target: p.target,
    // Absent for a record, as on the pipeline's relations and on a relation loaded back from the graph.
    ...(p.targetKind === 'ENTITY' ? { targetKind: 'ENTITY' as const } : {}),
    confidence: p.confidence,
    reason: p.reason,
    validFrom: p.validFrom,
    validTo: p.validTo,
    eventId: e.eventId,
    recordedAt: e.recordedAt,
  };
  const same = (x: RelationState) =>
    x.type === p.type && x.target === p.target && (x.targetKind ?? 'RECORD') === p.targetKind;
  const record = { ...r, relations: [...r.relations.filter((x) => !same(x)), rel] };
  const what = `${p.type} ${p.targetKind === 'ENTITY' ? 'entity' : 'record'} ${p.target}`;
  return { record, receipt: receiptOf(e, 'ADMITTED', p.recordId, version, `related: ${what}`) };
}
