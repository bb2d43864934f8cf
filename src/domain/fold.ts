import type { LedgerEvent } from './events.ts';
import type { Effect, ProjectionView } from './projection-state.ts';
import { erased } from './erasure-fold.ts';
import { holdPlaced, holdReleased } from './hold-fold.ts';
import { related } from './relate-fold.ts';
import { findingRaised, findingResolved } from './finding-fold.ts';
import { rolledBack } from './rollback-fold.ts';
import { approved, proposed, rejected } from './proposal-fold.ts';
import { archived, reinforced, retracted, revised } from './record-fold.ts';
import { entityCreated, episodeStored } from './entity-fold.ts';
import { accessGranted, accessRevoked } from './grant-fold.ts';
import { feedbackRecorded } from './feedback-fold.ts';
import { currentRevision } from './revisions.ts';

/**
 * The projection's fold: `evolve(view, event)` is pure and deterministic. It reads only the event and
 * the projected state (through `view`), never a clock; system time comes from `event.recordedAt`.
 * Nothing is edited in place: a change closes the current revision (`retiredAt`) and opens a new one.
 */

export type {
  Effect,
  EntityState,
  EpisodeState,
  Erasure,
  FeedbackCounts,
  FeedbackVerdict,
  FindingState,
  GrantState,
  HoldState,
  ProjectionView,
  Receipt,
  RecordState,
  RelationState,
  RevisionState,
  TaintState,
} from './projection-state.ts';
export { NO_FEEDBACK, proposedRelation } from './projection-state.ts';
export { utilityOf } from './feedback-fold.ts';
export { currentRevision };

export function evolve(view: ProjectionView, e: LedgerEvent): Effect {
  const prior = view.receipt(e.tenant, e.idempotencyKey);
  if (prior) {
    // The key was used before. Same input: a retried command, nothing to do. Another input: the
    // writer is told CONFLICT by reading this receipt; the original receipt stays as it is.
    return {};
  }
  switch (e.type) {
    case 'RecordProposed':
      return proposed(view, e);
    case 'RecordRevised':
      return revised(view, e);
    case 'RecordRetracted':
      return retracted(view, e);
    case 'EntityCreated':
      return entityCreated(view, e);
    case 'RecordReinforced':
      return reinforced(view, e);
    case 'ProposalApproved':
      return approved(view, e);
    case 'ProposalRejected':
      return rejected(view, e);
    case 'EpisodeStored':
      return episodeStored(view, e);
    case 'AccessGranted':
      return accessGranted(view, e);
    case 'AccessRevoked':
      return accessRevoked(view, e);
    case 'FeedbackRecorded':
      return feedbackRecorded(view, e);
    case 'Erased':
      return erased(view, e);
    case 'HoldPlaced':
      return holdPlaced(view, e);
    case 'HoldReleased':
      return holdReleased(view, e);
    case 'RecordArchived':
      return archived(view, e);
    case 'RecordRelated':
      return related(view, e);
    case 'FindingRaised':
      return findingRaised(view, e);
    case 'FindingResolved':
      return findingResolved(view, e);
    case 'RolledBack':
      return rolledBack(view, e);
  }
}
