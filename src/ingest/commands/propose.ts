import { commandHash, parseCommand, ProposeCommand, receiptKey } from '../../domain/commands.ts';
import type { Principal } from '../../domain/principal.ts';
import { highWaterMark } from '../assess.ts';
import { canonicalText } from '../normalize.ts';
import type { Draft } from '../plan.ts';
import { findingsOf } from '../screen-command.ts';
import type { CommandDeps, WriteDeps } from '../deps.ts';
import { commit } from '../commit.ts';
import { accessAndReceipt, charge, contextOf, receiptFor, screenOf, visible } from '../steps.ts';
import type { WriteReceipt } from '../receipts.ts';
import type { StageTimes } from '../stage-times.ts';
import { planDrafts, prepareDrafts, relatableSubjects } from '../plan-drafts.ts';

/**
 * propose: one statement from a writer → screen → check → gather → decide (plan.ts) → commit. `times`
 * gets each stage's milliseconds: check (screen, access, receipt), turn (the subject's), and gather's,
 * decide's and commit's own.
 */
export async function propose(
  d: CommandDeps & Pick<WriteDeps, 'budget' | 'embedder' | 'admission' | 'maxTextChars' | 'subjects'>,
  principal: Principal,
  input: unknown,
  wait: boolean,
  times: StageTimes,
): Promise<WriteReceipt> {
  const t0 = performance.now();
  const screened = screenOf(d, 'propose', parseCommand(ProposeCommand, input, d.maxTextChars));
  const cmd = screened.value;
  const hash = commandHash('propose', cmd);
  const key = receiptKey(principal, cmd.idempotencyKey);
  const [access, stored] = await accessAndReceipt(d, principal, cmd.namespace, key);
  // Every source must be a record the writer may see (NOT_FOUND otherwise, nothing appended).
  for (const id of new Set(cmd.derivedFrom ?? [])) await visible(d, principal, id, 'record to derive from');
  const prior = receiptFor(stored, key, hash);
  if (prior) return prior;
  // What screening found in any field (statement, rationale, entity names, labels, ext) labels and flags it.
  const found = findingsOf(screened.fields);
  const draft: Draft = {
    index: 0,
    class: cmd.class,
    statement: { ...cmd.statement, text: canonicalText(cmd.statement.text) },
    about: cmd.about,
    sources: cmd.sources,
    validFrom: cmd.validFrom ?? d.clock.now().toISOString(),
    validTo: cmd.validTo ?? null,
    timeSource: cmd.validFrom ? 'STATED' : 'DEFAULTED',
    sensitivity: highWaterMark([cmd.sensitivity, found.labelFloor]),
    flags: found.reasons,
    extractionConfidence: 1,
    rationale: cmd.rationale ?? null,
    ext: cmd.ext,
    source: null,
  };
  const scope = access.readScope(cmd.purpose);
  const ctx = contextOf(d, principal);
  const asked = performance.now();
  times.add('check', asked - t0);
  const prepared = prepareDrafts(d, [draft], times); // embedded while the turn is waited for
  return d.subjects.around(principal.tenant, relatableSubjects([draft]), async () => {
    times.add('turn', performance.now() - asked);
    const planned = await planDrafts(d, ctx, scope, cmd, hash, await prepared, null, '', times);
    if (planned.refused.length) return planned.refused[0]!;
    charge(d, principal, cmd.namespace, planned.events.length);
    return commit(d, principal, key, hash, planned.events, wait, undefined, times);
  });
}
