import { decideFeedback, FeedbackCommand, parseCommand } from '../../domain/commands.ts';
import { notFound } from '../../domain/errors.ts';
import { principalKey, type Principal } from '../../domain/principal.ts';
import { recordOfHandle } from '../../domain/handles.ts';
import type { CommandDeps, WriteDeps } from '../deps.ts';
import { commit } from '../commit.ts';
import { contextOf, priorReceipt, screenOf } from '../steps.ts';
import type { WriteReceipt } from '../receipts.ts';

/** feedback: a caller's verdict on a recalled item (utility), through the handle recall issued it. */

/**
 * A caller's verdict on an item a recall gave it. The handle must be one that recall issued (it is
 * MAC'd), and the record must still be visible to the caller; one verdict per caller per item.
 */
export async function feedback(
  d: CommandDeps & Pick<WriteDeps, 'handleKey'>,
  principal: Principal,
  input: unknown,
  wait: boolean,
): Promise<WriteReceipt> {
  const cmd = screenOf(d, 'feedback', parseCommand(FeedbackCommand, input)).value;
  // The handle is bound to the caller it was served to: anyone else's is simply unknown.
  const recordId = recordOfHandle(cmd.recallId, cmd.handle, d.handleKey, principalKey(principal));
  if (!recordId) throw notFound('unknown handle for this recall');
  // Under the recall's purpose (its purpose-bound grants found the record), or the feedback purpose.
  const scope = await d.policy.readScope(principal, cmd.purpose ?? 'feedback');
  const record = await d.store.record(scope, recordId);
  if (!record) throw notFound('unknown handle for this recall');
  const event = decideFeedback(contextOf(d, principal), cmd, recordId, record.namespace);
  const prior = await priorReceipt(d, principal.tenant, event.idempotencyKey, event.commandHash);
  if (prior) return prior;
  return commit(d, principal, event.idempotencyKey, event.commandHash, [event], wait);
}
