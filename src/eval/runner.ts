import { badInput } from '../domain/errors.ts';
import type { Clock } from '../ports/clock.ts';
import { goldenSetHash, queryNamespace, type GoldenQuery, type GoldenSet } from './golden.ts';
import { meanMetrics, meanMetricsByTag, NDCG_K, scoreQuery, cmp } from './metrics.ts';
import { RecipeName, RUN_FORMAT, type EvalRun, type QueryResult, type RunSetRef } from './model.ts';

/**
 * Runs a golden set against recall and scores it. The database and recall are ports, so this stays pure
 * apart from awaiting them: the caller (the CLI) seeds, maps record ids back to fixture ids and persists.
 */

export interface RecallRequest {
  readonly recipe: string;
  /** How many items to ask for: the query's k, but never fewer than 10 (nDCG is always @10). */
  readonly k: number;
  /** Where to ask: the query's namespace, else the set's. */
  readonly namespace: string;
}

export interface EvalDeps {
  /** Which of the set's fixtures are not in the database (by fixture id). */
  fixturesPresent(set: GoldenSet): Promise<{ readonly missing: readonly string[] }>;
  /**
   * Recall for one query: fixture ids in rank order, mapped back from record ids by the caller. A returned
   * record that is no fixture may be passed as its own id; it counts as not relevant.
   */
  recall(query: GoldenQuery, request: RecallRequest): Promise<readonly string[]>;
  readonly clock: Clock;
}

export interface RunOptions {
  /** The recall recipe, e.g. "hybrid". Required: the caller names what it measures. */
  readonly recipe: string;
  /** The default cut-off for the @k metrics (10); a query's own `k` wins. */
  readonly k?: number;
}

export const DEFAULT_K = 10;

/** What a run records about its set: enough to tell whether two runs measured the same thing. */
export function setRef(set: GoldenSet): RunSetRef {
  return { name: set.name, version: set.version, namespace: set.namespace, hash: goldenSetHash(set) };
}

/**
 * Scores every query of `set` with every metric, or skips the whole set when any fixture is missing.
 *
 * A missing fixture means the database does not hold what the judgements refer to; scoring anyway would
 * report a recall regression that is really a seeding problem, so the run is `skipped` with the missing
 * ids — never scored zero. A recall that fails fails the run for the same reason.
 */
export async function runGoldenSet(set: GoldenSet, deps: EvalDeps, options: RunOptions): Promise<EvalRun> {
  const recipe = RecipeName.safeParse(options.recipe);
  if (!recipe.success) throw badInput('a recipe name is a slug', { recipe: String(options.recipe) });
  const k = options.k ?? DEFAULT_K;
  if (!(Number.isInteger(k) && k > 0)) throw badInput('k must be a positive integer', { k: String(k) });
  const base = {
    format: RUN_FORMAT,
    set: setRef(set),
    recipe: recipe.data,
    k,
    startedAt: deps.clock.now().toISOString(),
  } as const;

  const known = new Set(set.fixtures.map((f) => f.id));
  const { missing } = await deps.fixturesPresent(set);
  const absent = [...new Set(missing)].filter((id) => known.has(id)).sort(cmp);
  if (absent.length > 0) {
    return {
      ...base,
      status: 'skipped',
      reason: `${absent.length} of ${set.fixtures.length} fixtures are missing from the database; seed the set first`,
      missing: absent,
    };
  }

  const perQuery: QueryResult[] = [];
  for (const q of set.queries) {
    const qk = q.k ?? k;
    const returned = [
      ...(await deps.recall(q, {
        recipe: recipe.data,
        k: Math.max(qk, NDCG_K),
        namespace: queryNamespace(set, q),
      })),
    ];
    perQuery.push({
      queryId: q.id,
      query: q.query,
      tags: [...q.tags],
      k: qk,
      returned,
      relevant: [...q.relevant],
      metrics: scoreQuery(returned, q.relevant, qk, q.grades),
    });
  }
  return {
    ...base,
    status: 'scored',
    finishedAt: deps.clock.now().toISOString(),
    perQuery,
    aggregate: meanMetrics(perQuery),
    byTag: meanMetricsByTag(perQuery),
  };
}
