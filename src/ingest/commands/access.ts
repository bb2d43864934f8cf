import {
  decideGrant,
  decideRevoke,
  GrantAccessCommand,
  parseCommand,
  RevokeAccessCommand,
} from '../../domain/commands.ts';
import { forbidden, notFound } from '../../domain/errors.ts';
import { hasScope, type Principal } from '../../domain/principal.ts';
import type { CommandDeps } from '../deps.ts';
import { commit } from '../commit.ts';
import { contextOf, priorReceipt, screenOf } from '../steps.ts';
import type { WriteReceipt } from '../receipts.ts';

/** Read grants: an admin grants or revokes access to a namespace subtree (ledger events). */

/** An admin grants a person or agent read access to a namespace subtree (a ledger event). */
export async function grantAccess(
  d: CommandDeps,
  principal: Principal,
  input: unknown,
  wait: boolean,
): Promise<WriteReceipt> {
  if (!hasScope(principal, 'admin')) throw forbidden('the admin scope is required to grant access');
  const cmd = screenOf(d, 'grantAccess', parseCommand(GrantAccessCommand, input)).value;
  const event = decideGrant(contextOf(d, principal), cmd);
  const prior = await priorReceipt(d, principal.tenant, event.idempotencyKey, event.commandHash);
  if (prior) return prior;
  return commit(d, principal, event.idempotencyKey, event.commandHash, [event], wait);
}

export async function revokeAccess(
  d: CommandDeps,
  principal: Principal,
  input: unknown,
  wait: boolean,
): Promise<WriteReceipt> {
  if (!hasScope(principal, 'admin')) throw forbidden('the admin scope is required to revoke access');
  const cmd = screenOf(d, 'revokeAccess', parseCommand(RevokeAccessCommand, input)).value;
  const grant = await d.store.grant(principal.tenant, cmd.grantId);
  if (!grant) throw notFound(`no grant ${cmd.grantId}`);
  const event = decideRevoke(contextOf(d, principal), cmd, grant.namespace);
  const prior = await priorReceipt(d, principal.tenant, event.idempotencyKey, event.commandHash);
  if (prior) return prior;
  return commit(d, principal, event.idempotencyKey, event.commandHash, [event], wait);
}
