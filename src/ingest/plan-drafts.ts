import type { DecideContext } from '../domain/commands.ts';
import type { LedgerEvent } from '../domain/events.ts';
import type { ReadScope } from '../domain/policy.ts';
import { embedDrafts, gather, type Embedded } from './gather.ts';
import { gate, OBSERVATION, plan, type Draft, type PlanCommand } from './plan.ts';
import type { StageTimes } from './stage-times.ts';
import type { WriteDeps } from './deps.ts';
import { refusal, type WriteReceipt } from './receipts.ts';

/** Drafts past the quality gate, embedded: ready to be decided once their subjects' turn comes. */
export interface Prepared {
  readonly embedded: Embedded;
  /** Drafts refused before the ledger, with their reasons. */
  readonly refused: WriteReceipt[];
}

interface Planned {
  readonly events: LedgerEvent[];
  /** Drafts refused before the ledger, with their reasons. */
  readonly refused: WriteReceipt[];
}

/**
 * The quality gate, then one embedder call for what passed. Neither reads the graph, so a command starts
 * this before it waits for its subjects' turn (subject-gate.ts) and awaits it in the turn: the model works
 * while the turn is waited for, and a contended turn is held for the lookups, the decision and the commit
 * only. A failure waits for that await (it is not an unhandled rejection meanwhile).
 */
export function prepareDrafts(
  d: Pick<WriteDeps, 'embedder' | 'admission'>,
  drafts: readonly Draft[],
  times: StageTimes,
): Promise<Prepared> {
  const { kept, refused } = gate(drafts, d.admission.gates);
  const prepared = embedDrafts(d, kept, times).then((embedded) => ({
    embedded,
    refused: refused.map(refusal),
  }));
  prepared.catch(() => undefined);
  return prepared;
}

/** gather → decide for a command's prepared drafts: the events to append, and the refusals. */
export async function planDrafts(
  d: Pick<WriteDeps, 'store' | 'embedder' | 'admission'>,
  ctx: DecideContext,
  scope: ReadScope,
  cmd: PlanCommand,
  hash: string,
  prepared: Prepared,
  episodeId: string | null,
  suffixPrefix: string,
  times: StageTimes,
): Promise<Planned> {
  const facts = await gather(d, scope, cmd.namespace, prepared.embedded, times);
  const t0 = performance.now();
  const events = plan(
    {
      ctx,
      cmd,
      hash,
      drafts: prepared.embedded.drafts,
      episodeId,
      suffixPrefix,
      admission: d.admission,
      modelId: d.embedder.modelId,
    },
    facts,
  );
  times.add('decide', performance.now() - t0);
  return { events, refused: prepared.refused };
}

/** The subjects relate decides on for these drafts (an observation is never related): the gate's keys. */
export const relatableSubjects = (drafts: readonly Draft[]): string[] =>
  drafts.filter((dr) => dr.class !== OBSERVATION).map((dr) => dr.statement.subject);
