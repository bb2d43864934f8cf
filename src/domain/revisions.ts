import type { RecordState, RevisionState } from './projection-state.ts';
import type { Statement } from './model.ts';

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

/** Whether two statements say the same (a new revision with the same words is not new text). */
export const sameStatement = (a: Statement, b: Statement): boolean =>
  a.subject === b.subject && a.predicate === b.predicate && a.object === b.object && a.text === b.text;
