import {
  ApproveCommand,
  decideApprove,
  decideReject,
  parseCommand,
  RejectCommand,
} from '../../domain/commands.ts';
import { conflict, forbidden } from '../../domain/errors.ts';
import type { Principal } from '../../domain/principal.ts';
import {
  approversRequired,
  decideApproval,
  describeApproval,
  partiesOf,
  ReviewReasons,
} from '../../domain/review.ts';
import type { CommandDeps, WriteDeps } from '../deps.ts';
import { commit } from '../commit.ts';
import { contextOf, priorReceipt, screenOf, visible } from '../steps.ts';
import { checkReviewable, type WriteReceipt } from '../receipts.ts';
import { flaggedForReview } from '../../domain/rollback-fold.ts';

/** The review decisions on a proposal waiting for review: approve and reject. */

/**
 * Approve is a compare-and-swap on the proposal's version, under separation of duties (review.ts): a
 * party to the proposal (its proposer or the proposer's agents) may not approve a record that needs
 * another reviewer — NORMATIVE, injection-flagged, or a class the rules list — (FORBIDDEN), one reviewer
 * never counts twice (CONFLICT), and where the rules ask for N reviewers the approvals before the N-th
 * are recorded as partial (QUEUED). Every check runs before a stored receipt is returned; a refusal
 * appends nothing.
 */
export async function approve(
  d: CommandDeps & Pick<WriteDeps, 'approvers'>,
  principal: Principal,
  input: unknown,
  wait: boolean,
): Promise<WriteReceipt> {
  const cmd = screenOf(d, 'approve', parseCommand(ApproveCommand, input)).value;
  const current = await visible(d, principal, cmd.proposalId, 'proposal');
  await d.policy.checkReview(principal, current.namespace);
  const required = approversRequired(d.approvers[current.class], current);
  const event = decideApprove(contextOf(d, principal), cmd, current.namespace, required);
  const prior = await priorReceipt(d, principal.tenant, event.idempotencyKey, event.commandHash);
  if (prior) return prior;
  checkReviewable(current, cmd.expectedVersion);
  const [by, ...via] = partiesOf(principal, principal.actors);
  // A record a rollback flagged is kept by one reviewer's decision (earlier approvals were of its proposal).
  const flagged = current.status !== 'CANDIDATE' && flaggedForReview(current);
  const decision = decideApproval(
    [current.proposedBy, ...current.proposedVia],
    flagged ? [] : current.approvals,
    { by: by!, via },
    required,
  );
  if (decision.kind === 'SELF') throw forbidden(describeApproval(decision), { reason: ReviewReasons.SELF });
  if (decision.kind === 'AGAIN')
    throw conflict(describeApproval(decision), {
      reason: ReviewReasons.AGAIN,
      currentVersion: current.version,
    });
  return commit(d, principal, event.idempotencyKey, event.commandHash, [event], wait);
}

export async function reject(
  d: CommandDeps,
  principal: Principal,
  input: unknown,
  wait: boolean,
): Promise<WriteReceipt> {
  const cmd = screenOf(d, 'reject', parseCommand(RejectCommand, input)).value;
  const current = await visible(d, principal, cmd.proposalId, 'proposal');
  await d.policy.checkReview(principal, current.namespace);
  const expectedVersion = cmd.expectedVersion ?? current.version;
  const event = decideReject(contextOf(d, principal), { ...cmd, expectedVersion }, current.namespace);
  const prior = await priorReceipt(d, principal.tenant, event.idempotencyKey, event.commandHash);
  if (prior) return prior;
  checkReviewable(current, expectedVersion);
  return commit(d, principal, event.idempotencyKey, event.commandHash, [event], wait);
}
