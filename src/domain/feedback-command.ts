import { z } from 'zod';
import { sha256Hex } from './canonical.ts';
import type { LedgerEvent } from './events.ts';
import { commandHash, envelope, Purpose, type DecideContext } from './command-envelope.ts';

export const FeedbackVerdicts = ['USED', 'IGNORED', 'WRONG'] as const;
export const FeedbackCommand = z.object({
  recallId: z.string().min(1).max(200),
  handle: z.string().min(1).max(400),
  verdict: z.enum(FeedbackVerdicts),
  purpose: Purpose.optional(),
});
export type FeedbackCommand = z.infer<typeof FeedbackCommand>;

/** One verdict per caller per recalled item: a retry is a no-op, a changed verdict a CONFLICT. */
export function decideFeedback(
  ctx: DecideContext,
  cmd: FeedbackCommand,
  recordId: string,
  namespace: string,
): LedgerEvent {
  // In the caller's key space already; the recall and the record make it one per item.
  const key = `feedback:${sha256Hex(`${cmd.recallId}\u0000${recordId}`).slice(0, 40)}`;
  return {
    ...envelope(
      ctx,
      { idempotencyKey: key, derivedKey: true, purpose: 'feedback' },
      namespace,
      commandHash('feedback', cmd),
    ),
    type: 'FeedbackRecorded',
    schemaVersion: 1,
    payload: { recordId, recallId: cmd.recallId, verdict: cmd.verdict },
  };
}
