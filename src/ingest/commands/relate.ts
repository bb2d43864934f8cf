import { commandHash, parseCommand, receiptKey } from '../../domain/commands.ts';
import { notFound } from '../../domain/errors.ts';
import type { Principal } from '../../domain/principal.ts';
import { decideRelate, RelateCommand } from '../../domain/relations.ts';
import type { CommandDeps, WriteDeps } from '../deps.ts';
import { commit } from '../commit.ts';
import { charge, contextOf, priorReceipt, screenOf, visible } from '../steps.ts';
import type { WriteReceipt } from '../receipts.ts';

/**
 * relate: an explicit typed relation from a record to a record or an entity (relations.ts). The caller
 * must see both ends (NOT_FOUND otherwise: an invisible end is not confirmed) and write in the source
 * record's namespace, where the relation is recorded. Nothing is appended when a check fails.
 */
export async function relate(
  d: CommandDeps & Pick<WriteDeps, 'budget' | 'maxTextChars'>,
  principal: Principal,
  input: unknown,
  wait: boolean,
): Promise<WriteReceipt> {
  const cmd = screenOf(d, 'relate', parseCommand(RelateCommand, input, d.maxTextChars)).value;
  const hash = commandHash('relate', cmd);
  const key = receiptKey(principal, cmd.idempotencyKey);
  const from = await visible(d, principal, cmd.from, 'record');
  if (cmd.targetKind === 'RECORD') await visible(d, principal, cmd.to, 'record');
  else {
    const scope = await d.policy.readScope(principal, undefined);
    if (!(await d.store.findEntity(scope, { id: cmd.to }))) throw notFound(`no entity ${cmd.to}`);
  }
  await d.policy.checkWrite(principal, from.namespace);
  const prior = await priorReceipt(d, principal.tenant, key, hash);
  if (prior) return prior;
  charge(d, principal, from.namespace, 1);
  return commit(d, principal, key, hash, [decideRelate(contextOf(d, principal), cmd, from.namespace)], wait);
}
