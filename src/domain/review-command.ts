import { z } from 'zod';
import type { LedgerEvent } from './events.ts';
import { commandHash, envelope, IdempotencyKey, type DecideContext } from './command-envelope.ts';

export const ApproveCommand = z.object({
  proposalId: z.string().min(1).max(200),
  expectedVersion: z.number().int().min(1),
  idempotencyKey: IdempotencyKey.optional(),
});
export type ApproveCommand = z.infer<typeof ApproveCommand>;

export const RejectCommand = z.object({
  proposalId: z.string().min(1).max(200),
  reason: z.string().min(1).max(2000),
  expectedVersion: z.number().int().min(1).optional(),
  idempotencyKey: IdempotencyKey.optional(),
});
export type RejectCommand = z.infer<typeof RejectCommand>;

/**
 * A review decision's key defaults to one per (reviewer, proposal, version): a reviewer's retry is
 * idempotent, and (derived, in the reviewer's own key space) no one else can take it first.
 */
const reviewKey = (kind: string, id: string, version: number, key: string | undefined) =>
  key
    ? { idempotencyKey: key, purpose: 'review' }
    : { idempotencyKey: `${kind}:${id}:v${version}`, derivedKey: true, purpose: 'review' };

/** `required`: approvers other than the proposer the rules ask for (see review.ts); recorded in the event. */
export function decideApprove(
  ctx: DecideContext,
  cmd: ApproveCommand,
  namespace: string,
  required = 0,
): LedgerEvent {
  const meta = reviewKey('approve', cmd.proposalId, cmd.expectedVersion, cmd.idempotencyKey);
  return {
    ...envelope(
      ctx,
      meta,
      namespace,
      commandHash('approve', { ...cmd, by: `${ctx.principal.iss}|${ctx.principal.sub}` }),
    ),
    type: 'ProposalApproved',
    schemaVersion: 2,
    payload: { recordId: cmd.proposalId, expectedVersion: cmd.expectedVersion, required },
  };
}

export function decideReject(
  ctx: DecideContext,
  cmd: RejectCommand & { expectedVersion: number },
  namespace: string,
): LedgerEvent {
  const meta = reviewKey('reject', cmd.proposalId, cmd.expectedVersion, cmd.idempotencyKey);
  return {
    ...envelope(
      ctx,
      meta,
      namespace,
      commandHash('reject', { ...cmd, by: `${ctx.principal.iss}|${ctx.principal.sub}` }),
    ),
    type: 'ProposalRejected',
    schemaVersion: 1,
    payload: { recordId: cmd.proposalId, expectedVersion: cmd.expectedVersion, reason: cmd.reason },
  };
}
