/**
 * `muninn eval` as one use case over ports: (optionally) seed each golden set into a test database, run it
 * against recall with each recipe, persist every run with its per-query breakdown, and compare it with the
 * previous run of the same set and recipe so a regression names the query that moved.
 */
import type { Clock } from '../ports/clock.ts';
import type { TextFiles } from '../ports/text-files.ts';
import type { GoldenSet } from './golden.ts';
import type { EvalRun } from './model.ts';
import { formatRun } from './report.ts';
import { runGoldenSet } from './runner.ts';
import { compareRuns, listRuns, previousScored, writeRun } from './runs.ts';
import { fixtureIdempotencyKey, seedGoldenSet, type SeedRecord, type TestDatabaseMarker } from './seed.ts';

export interface EvaluatePorts {
  readonly database: TestDatabaseMarker;
  /** Writes one fixture (idempotent by its key); resolves when it is persisted. */
  propose(record: SeedRecord): Promise<void>;
  /** The record id a fixture's idempotency key produced, when it exists and is visible. */
  recordOf(idempotencyKey: string): Promise<string | undefined>;
  /** Record ids in rank order. */
  recall(request: {
    query: string;
    purpose: string;
    namespace: string;
    recipe: string;
    k: number;
  }): Promise<readonly string[]>;
  readonly clock: Clock;
  /** Where runs are kept (runsDir). */
  readonly files: TextFiles;
}

export interface EvaluateOptions {
  readonly recipes: readonly string[];
  readonly seed: boolean;
  readonly runsDir: string;
  readonly k?: number;
}

export interface EvaluateResult {
  readonly run: EvalRun;
  readonly path: string;
  readonly report: string;
}

export async function evaluate(
  sets: readonly GoldenSet[],
  ports: EvaluatePorts,
  options: EvaluateOptions,
): Promise<EvaluateResult[]> {
  const out: EvaluateResult[] = [];
  for (const set of sets) {
    if (options.seed) await seedGoldenSet(set, { database: ports.database, write: (r) => ports.propose(r) });
    // fixture id ↔ record id, through the fixtures' deterministic idempotency keys
    const toRecord = new Map<string, string>();
    for (const f of set.fixtures) {
      const id = await ports.recordOf(fixtureIdempotencyKey(set.name, f.id));
      if (id) toRecord.set(f.id, id);
    }
    const toFixture = new Map([...toRecord].map(([f, r]) => [r, f]));
    for (const recipe of options.recipes) {
      const run = await runGoldenSet(
        set,
        {
          clock: ports.clock,
          fixturesPresent: async () => ({
            missing: set.fixtures.filter((f) => !toRecord.has(f.id)).map((f) => f.id),
          }),
          recall: async (q, req) =>
            (
              await ports.recall({
                query: q.query,
                purpose: q.purpose,
                namespace: req.namespace,
                recipe: req.recipe,
                k: req.k,
              })
            ).map((id) => toFixture.get(id) ?? id),
        },
        { recipe, ...(options.k ? { k: options.k } : {}) },
      );
      const previous = previousScored(await listRuns(ports.files, options.runsDir, set.name), run);
      const path = await writeRun(ports.files, options.runsDir, run);
      const comparison = previous && run.status === 'scored' ? compareRuns(previous, run) : undefined;
      out.push({ run, path, report: formatRun(run, comparison ? { comparison } : {}) });
    }
  }
  return out;
}
