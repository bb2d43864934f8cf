import type { RecordState, RevisionState } from './projection-state.ts';
import type { RecordStatus, Statement } from './model.ts';

/** Revision bookkeeping shared by the fold and its parts (rollback-fold.ts): pure, no clock. */

export const currentRevision = (r: RecordState): RevisionState => r.revisions[r.revisions.length - 1]!;

/** Close the current revision at `at` and append `next` as the new current one. */
export function appendRevision(
  record: RecordState,
  at: string,
  next: Omit<RevisionState, 'retiredAt' | 'recordedAt'>,
): RecordState {
  const revisions = record.revisions.map((r, i) =>
    i === record.revisions.length - 1 ? { ...r, retiredAt: at } : r,
  );
  return { ...record, revisions: [...revisions, { ...next, recordedAt: at, retiredAt: null }] };
}

/**
 * A record's current revision closed by an event that changes only its status (rejected, retracted,
 * archived, contested) or, keeping the status, only its reason (kept after review): the new revision keeps
 * the statement and validity, names the event and its reason, and is one version up.
 */
export function closeWith(
  record: RecordState,
  e: { readonly recordedAt: string; readonly eventId: string; readonly changesetId: string | null },
  status: RecordStatus,
  reason: string | null,
): { record: RecordState; version: number } {
  const current = currentRevision(record);
  const version = current.version + 1;
  const next = appendRevision(record, e.recordedAt, {
    ...current,
    version,
    status,
    changesetId: e.changesetId,
    eventId: e.eventId,
    reason,
  });
  return { record: next, version };
}

/** Whether two statements say the same (a new revision with the same words is not new text). */
export const sameStatement = (a: Statement, b: Statement): boolean =>
  a.subject === b.subject && a.predicate === b.predicate && a.object === b.object && a.text === b.text;
