import type { GraphAdmin, ProjectionStore } from '../ports/graph.ts';
import type { Ledger } from '../ports/ledger.ts';
import { applyBatch, type ApplyDeps } from './apply.ts';

export interface RebuildReport {
  readonly events: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  readonly hash: string;
  readonly nodes: number;
  readonly relationships: number;
}

/**
 * Replays the whole ledger into an emptied graph through the same `applyBatch` the projector uses, then
 * returns the canonical state hash. Stop the projector first: both would write the same checkpoints.
 */
export async function rebuild(
  ledger: Ledger,
  store: ProjectionStore & Pick<GraphAdmin, 'migrate' | 'stateHash' | 'wipe'>,
  topic: string,
  batchMax: number,
  progress: (events: number) => void = () => undefined,
  decode?: ApplyDeps['decode'],
): Promise<RebuildReport> {
  await store.wipe();
  await store.migrate();
  const t0 = performance.now();
  let events = 0;
  await ledger.readAll(async (batch) => {
    await applyBatch(
      { store, topic, deadLetter: (d) => ledger.deadLetter(d), ...(decode ? { decode } : {}) },
      batch.partition,
      batch.messages,
    );
    events += batch.messages.length;
    progress(events);
  }, batchMax);
  const seconds = (performance.now() - t0) / 1000;
  const h = await store.stateHash();
  return { events, seconds, eventsPerSecond: seconds > 0 ? events / seconds : 0, ...h };
}
