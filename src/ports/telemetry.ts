import type { Embedder } from './embedder.ts';
import type { SubjectTurns } from './ingest-lookups.ts';

/**
 * What the service reports about itself for operators (Prometheus at /metrics when enabled). Labels are
 * from closed sets only (operation root fields, error codes, recipes, stages): never a tenant, a caller
 * or any text, so the figures are safe to scrape from outside a tenant's trust boundary.
 */
export interface Telemetry {
  /** One GraphQL operation: its root field (or `unknown`), its outcome code (`OK` or the error code), seconds. */
  graphql(operation: string, code: string, seconds: number): void;
  /** One recall: its recipe and each stage's milliseconds (embed, lexical, vector, graph, fuse, …). */
  recall(recipe: string, stagesMs: Readonly<Record<string, number>>): void;
  /**
   * One write that reached the ledger: its command (propose, episode) and each stage's milliseconds
   * (check, turn, extract, embed, lookup, decide, append, await).
   */
  write(command: string, stagesMs: Readonly<Record<string, number>>): void;
  /** One call to the embedder: how many texts, and seconds. */
  embedBatch(size: number, seconds: number): void;
  /** Events the projector set aside to the dead-letter topic. */
  deadLettered(count: number): void;
  /** One wait for subjects' turns across API processes: taken, or given up (the write refused), and seconds. */
  subjectTurn(outcome: 'taken' | 'given_up', seconds: number): void;
}

export const noTelemetry: Telemetry = {
  graphql: () => undefined,
  recall: () => undefined,
  write: () => undefined,
  embedBatch: () => undefined,
  deadLettered: () => undefined,
  subjectTurn: () => undefined,
};

type Closable = Embedder & { close?: () => Promise<void> };

/** The embedder, reporting each batch's size and time. */
export function measuredEmbedder(e: Closable, t: Telemetry): Closable {
  return {
    modelId: e.modelId,
    dimensions: e.dimensions,
    ...(e.batchInvariant === undefined ? {} : { batchInvariant: e.batchInvariant }),
    async embed(texts) {
      const t0 = performance.now();
      try {
        return await e.embed(texts);
      } finally {
        t.embedBatch(texts.length, (performance.now() - t0) / 1000);
      }
    },
    ...(e.close ? { close: () => e.close!() } : {}),
  };
}

/** The subject turns, reporting each wait for them: contention across API replicas shows as long waits. */
export function measuredTurns(turns: SubjectTurns, t: Telemetry): SubjectTurns {
  return {
    async hold(keys, waitMs, holdMs) {
      const t0 = performance.now();
      const held = await turns.hold(keys, waitMs, holdMs);
      t.subjectTurn(held ? 'taken' : 'given_up', (performance.now() - t0) / 1000);
      return held;
    },
  };
}
