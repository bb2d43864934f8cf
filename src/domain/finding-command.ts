import { z } from 'zod';
import { commandHash, envelope, type DecideContext } from './commands.ts';
import type { LedgerEvent } from './events.ts';
import type { FindingState } from './projection-state.ts';

/**
 * dismissFinding: a reviewer accepts a steward finding that holds ("known, leave it"), with the reason.
 * Decided into a `FindingResolved` marked `dismissed`; the steward does not raise that finding again (its
 * id is derived from the check and the records it names, so a new situation is a new finding).
 */
export const DismissFindingCommand = z.object({
  id: z.string().min(1).max(200),
  reason: z.string().min(1).max(2000),
  idempotencyKey: z.string().min(1).max(256),
});
export type DismissFindingCommand = z.infer<typeof DismissFindingCommand>;

export function decideDismissFinding(
  ctx: DecideContext,
  cmd: DismissFindingCommand,
  finding: FindingState,
): LedgerEvent {
  return {
    ...envelope(
      ctx,
      { idempotencyKey: cmd.idempotencyKey, purpose: 'stewardship' },
      finding.namespace,
      commandHash('dismissFinding', cmd),
    ),
    type: 'FindingResolved',
    schemaVersion: 1,
    payload: { findingId: finding.id, reason: cmd.reason, dismissed: true },
  };
}
