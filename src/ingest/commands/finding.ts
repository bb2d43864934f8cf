import { commandHash, parseCommand, receiptKey } from '../../domain/commands.ts';
import { conflict, forbidden, notFound } from '../../domain/errors.ts';
import { decideDismissFinding, DismissFindingCommand } from '../../domain/finding-command.ts';
import { hasScope, type Principal } from '../../domain/principal.ts';
import type { CommandDeps } from '../deps.ts';
import { commit } from '../commit.ts';
import { contextOf, priorReceipt, screenOf } from '../steps.ts';
import type { WriteReceipt } from '../receipts.ts';

/**
 * dismissFinding: needs the review scope and a review grant on the finding's namespace. A finding the
 * caller may not see (a record or entity it names is outside the caller's scope) is NOT_FOUND, like a
 * missing one; a finding already resolved or dismissed is CONFLICT. A retry with the same key answers
 * with the first receipt. Refusals append nothing.
 */
export async function dismissFinding(
  d: CommandDeps,
  principal: Principal,
  input: unknown,
  wait: boolean,
): Promise<WriteReceipt> {
  const cmd = screenOf(d, 'dismissFinding', parseCommand(DismissFindingCommand, input)).value;
  // Before any lookup: without the scope, whether the finding exists is not disclosed.
  if (!hasScope(principal, 'review')) throw forbidden('the review scope is required to dismiss a finding');
  const finding = await d.store.finding(await d.policy.readScope(principal, undefined), cmd.id);
  if (!finding) throw notFound(`no finding ${cmd.id}`);
  await d.policy.checkReview(principal, finding.namespace);
  const hash = commandHash('dismissFinding', cmd);
  const key = receiptKey(principal, cmd.idempotencyKey);
  const prior = await priorReceipt(d, principal.tenant, key, hash);
  if (prior) return prior;
  if (finding.resolvedAt !== null)
    throw conflict(`finding ${cmd.id} is already ${finding.dismissed ? 'dismissed' : 'resolved'}`);
  return commit(d, principal, key, hash, [decideDismissFinding(contextOf(d, principal), cmd, finding)], wait);
}
