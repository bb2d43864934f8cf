import { z } from 'zod';
import { GoldenSetName } from './golden.ts';
import { METRICS, type MetricName } from './metrics.ts';

/**
 * The shape of one evaluation run, as returned by the runner and stored as JSON by `runs.ts`. Defined once
 * as a zod schema because a stored run is read back from disk (an edge) to be listed and compared.
 */

/** Bumped when the stored shape changes incompatibly; a reader refuses any other value. */
export const RUN_FORMAT = 1;

/** Recipe names become part of file names: a slug, like the recipes in src/recall/recipes.ts. */
export const RecipeName = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/i, 'a recipe name is a slug');

const Metrics = z.strictObject(
  Object.fromEntries(METRICS.map((m) => [m, z.number().min(0).max(1)])) as Record<MetricName, z.ZodNumber>,
);

const Means = z.strictObject({ n: z.int().min(1), means: Metrics });

/** Which golden set a run measured: name, version and the content hash of the validated set. */
export const RunSetRef = z.strictObject({
  name: GoldenSetName,
  version: z.int().min(1),
  namespace: z.string(),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
});
export type RunSetRef = z.infer<typeof RunSetRef>;

export const QueryResult = z.strictObject({
  queryId: z.string(),
  query: z.string(),
  tags: z.array(z.string()),
  /** The cut-off this query was scored at (the query's own k, else the run's). */
  k: z.int().min(1),
  /** Fixture ids (or foreign record ids) in rank order, as recall returned them. */
  returned: z.array(z.string()),
  relevant: z.array(z.string()),
  metrics: Metrics,
});
export type QueryResult = z.infer<typeof QueryResult>;

const RunBase = {
  format: z.literal(RUN_FORMAT),
  set: RunSetRef,
  recipe: RecipeName,
  k: z.int().min(1),
  /** ISO-8601 UTC with milliseconds, as `Date.toISOString()` writes it; part of the run's file name. */
  startedAt: z.iso.datetime(),
};

export const ScoredRun = z.strictObject({
  ...RunBase,
  status: z.literal('scored'),
  finishedAt: z.iso.datetime(),
  perQuery: z.array(QueryResult).min(1),
  aggregate: Means,
  byTag: z.record(z.string(), Means),
});
export type ScoredRun = z.infer<typeof ScoredRun>;

export const SkippedRun = z.strictObject({
  ...RunBase,
  status: z.literal('skipped'),
  reason: z.string(),
  /** Fixture ids not found in the database, in code-unit order. */
  missing: z.array(z.string()).min(1),
});
export type SkippedRun = z.infer<typeof SkippedRun>;

export const EvalRun = z.discriminatedUnion('status', [ScoredRun, SkippedRun]);
export type EvalRun = z.infer<typeof EvalRun>;
