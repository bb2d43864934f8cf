import type { DecideContext } from '../domain/commands.ts';
import type { LedgerEvent } from '../domain/events.ts';
import type { ReadScope } from '../domain/policy.ts';
import { gather } from './gather.ts';
import { gate, OBSERVATION, plan, type Draft, type PlanCommand } from './plan.ts';
import { StageTimes } from './stage-times.ts';
import type { WriteDeps } from './deps.ts';
import { refusal, type WriteReceipt } from './receipts.ts';

interface Planned {
  readonly events: LedgerEvent[];
  /** Drafts refused before the ledger, with their reasons. */
  readonly refused: WriteReceipt[];
}

/** gather → decide for a batch of drafts of one command: the events to append, and the refusals. */
export async function planDrafts(
  d: Pick<WriteDeps, 'store' | 'embedder' | 'admission'>,
  ctx: DecideContext,
  scope: ReadScope,
  cmd: PlanCommand,
  hash: string,
  drafts: readonly Draft[],
  episodeId: string | null,
  suffixPrefix: string,
  times: StageTimes = new StageTimes(),
): Promise<Planned> {
  const { kept, refused } = gate(drafts, d.admission.gates);
  const facts = await gather(d, scope, cmd.namespace, kept, times);
  const t0 = performance.now();
  const events = plan(
    {
      ctx,
      cmd,
      hash,
      drafts: kept,
      episodeId,
      suffixPrefix,
      admission: d.admission,
      modelId: d.embedder.modelId,
    },
    facts,
  );
  times.add('decide', performance.now() - t0);
  return { events, refused: refused.map(refusal) };
}

/** The subjects relate decides on for these drafts (an observation is never related): the gate's keys. */
export const relatableSubjects = (drafts: readonly Draft[]): string[] =>
  drafts.filter((dr) => dr.class !== OBSERVATION).map((dr) => dr.statement.subject);
