import {
  commandHash,
  decideRetract,
  parseCommand,
  receiptKey,
  RetractCommand,
} from '../../domain/commands.ts';
import type { Principal } from '../../domain/principal.ts';
import { planTaints } from '../../domain/rollback-plan.ts';
import type { CommandDeps, WriteDeps } from '../deps.ts';
import { commit } from '../commit.ts';
import { charge, contextOf, priorReceipt, screenOf, visible } from '../steps.ts';
import { checkVersion, type WriteReceipt } from '../receipts.ts';

/** retract: a visible record leaves current belief (its history stays), at the version the writer read. */
export async function retract(
  d: CommandDeps & Pick<WriteDeps, 'budget' | 'maxTextChars'>,
  principal: Principal,
  input: unknown,
  wait: boolean,
): Promise<WriteReceipt> {
  const cmd = screenOf(d, 'retract', parseCommand(RetractCommand, input, d.maxTextChars)).value;
  const hash = commandHash('retract', cmd);
  const key = receiptKey(principal, cmd.idempotencyKey);
  const current = await visible(d, principal, cmd.id, 'record');
  await d.policy.checkWrite(principal, current.namespace);
  const prior = await priorReceipt(d, principal.tenant, key, hash);
  if (prior) return prior;
  checkVersion(current, cmd.expectedVersion);
  charge(d, principal, current.namespace, 1);
  // What was derived from it is tainted with it. The reason names ids only: the retraction's own reason
  // may be sealed (personal), a taint's is stored in clear.
  const edges = await d.store.derivations(principal.tenant, [cmd.id], TAINT_DEPTH);
  const taints = planTaints([cmd.id], edges, new Set([cmd.id]), '', TAINT_DEPTH, 'retracted').slice(
    0,
    MAX_TAINTS,
  );
  return commit(
    d,
    principal,
    key,
    hash,
    [decideRetract(contextOf(d, principal), cmd, current.namespace, taints)],
    wait,
  );
}

/** How far a retraction's taint walks, and how many records one retraction taints at most (one event). */
const TAINT_DEPTH = 16;
const MAX_TAINTS = 1000;
