import { commandHash, decideRevise, parseCommand, receiptKey, ReviseCommand } from '../../domain/commands.ts';
import { badInput, conflict } from '../../domain/errors.ts';
import { holdsCovering } from '../../domain/retention.ts';
import type { Sensitivity } from '../../domain/model.ts';
import type { Principal } from '../../domain/principal.ts';
import { labelChange } from '../../domain/reclassify.ts';
import { highWaterMark } from '../assess.ts';
import { canonicalText } from '../normalize.ts';
import { findingsOf, type Findings } from '../screen-command.ts';
import type { CommandDeps, WriteDeps } from '../deps.ts';
import { commit } from '../commit.ts';
import { charge, contextOf, embeddingsOf, priorReceipt, screenOf, visible } from '../steps.ts';
import { checkVersion, type WriteReceipt } from '../receipts.ts';

/**
 * revise: a new statement or validity for a visible record, at the version the writer read; or a new
 * class, label or namespace (reclassify / rescope, a move keeps the record's id and history).
 */
export async function revise(
  d: CommandDeps & Pick<WriteDeps, 'budget' | 'embedder' | 'maxTextChars'>,
  principal: Principal,
  input: unknown,
  wait: boolean,
): Promise<WriteReceipt> {
  const screened = screenOf(d, 'revise', parseCommand(ReviseCommand, input, d.maxTextChars));
  const cmd = screened.value;
  const hash = commandHash('revise', cmd);
  const key = receiptKey(principal, cmd.idempotencyKey);
  // The same checks as a fresh write come before a stored receipt is returned.
  const current = await visible(d, principal, cmd.id, 'record');
  await checkEntitled(d, principal, current, cmd);
  await checkNotHeld(d, principal.tenant, current, cmd.namespace);
  refuseUnreviewedFindings(cmd.sensitivity ?? current.sensitivity, findingsOf(screened.fields, 'statement'));
  const prior = await priorReceipt(d, principal.tenant, key, hash);
  if (prior) return prior;
  checkVersion(current, cmd.expectedVersion);
  const event = decideRevise(contextOf(d, principal), cmd, current.namespace);
  if (cmd.statement && event.type === 'RecordRevised') {
    const statement = { ...cmd.statement, text: canonicalText(cmd.statement.text) };
    const [embedding] = await embeddingsOf(d, [statement.text]);
    event.payload.statement = statement;
    event.payload.embedding = embedding ?? null;
  }
  charge(d, principal, current.namespace, 1);
  return commit(d, principal, key, hash, [event], wait);
}

/**
 * Write access to the record's namespace and, for a move, to the target's (one policy, both ends); a
 * lowered label also needs the review scope there. Refused before anything is appended.
 */
async function checkEntitled(
  d: Pick<CommandDeps, 'policy'>,
  principal: Principal,
  current: { namespace: string; sensitivity: Sensitivity },
  cmd: ReviseCommand,
): Promise<void> {
  const namespaces = [...new Set([current.namespace, cmd.namespace ?? current.namespace])];
  for (const ns of namespaces) await d.policy.checkWrite(principal, ns);
  if (labelChange(current.sensitivity, cmd.sensitivity) === 'LOWER')
    for (const ns of namespaces) await d.policy.checkReview(principal, ns);
}

/**
 * A move may not take a record out of a namespace a standing legal hold covers (the hold would no longer
 * reach it, and its new namespace's erasure or retention would): CONFLICT, release the hold first. A hold
 * on the record itself follows it, and a move within the held subtree stays covered.
 */
async function checkNotHeld(
  d: Pick<CommandDeps, 'store'>,
  tenant: string,
  current: { id: string; namespace: string },
  to: string | null | undefined,
): Promise<void> {
  if (!to || to === current.namespace) return;
  const holds = (await d.store.standingHolds(tenant)).filter((h) => h.target === 'NAMESPACE');
  const item = (namespace: string) => ({ record: true, id: current.id, namespace });
  const before = holdsCovering(holds, item(current.namespace));
  const after = new Set(holdsCovering(holds, item(to)));
  const escaping = before.filter((h) => !after.has(h));
  if (escaping.length)
    throw conflict('under legal hold: the move would take the record out of a held namespace', {
      holds: escaping.map((h) => h.id),
    });
}

/**
 * A revision is not reviewed and carries no label or flags of its own (RecordRevised), so it may not bring in
 * what screening would send to a reviewer or label higher than the record: that is a new proposal.
 */
function refuseUnreviewedFindings(current: Sensitivity, found: Findings): void {
  const injection = found.reasons.filter((r) => r.startsWith('injection:'));
  if (injection.length > 0)
    throw badInput(
      `the new statement is flagged (${injection.join(', ')}) and a revision is not reviewed: retract the ` +
        'record and propose the statement instead (it will wait for a reviewer)',
      { flags: injection },
    );
  const label = highWaterMark([current, found.labelFloor]);
  if (label !== current)
    throw badInput(
      `the new statement needs the label ${label} (${found.reasons.join(', ')}), above the record's ${current}: ` +
        'raise the label in the same revision (sensitivity), or retract the record and propose the statement',
      { flags: found.reasons },
    );
}
