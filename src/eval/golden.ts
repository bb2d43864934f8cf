import { z } from 'zod';
import { canonicalJson, sha256Hex } from '../domain/canonical.ts';
import { parseCommand } from '../domain/commands.ts';
import { Instant, NamespacePath, RecordClasses, Statement, withinNamespace } from '../domain/model.ts';

/**
 * A golden set: fixtures (records with fixed, stable ids, seeded into a test database) and queries whose
 * relevant answers are named by those fixture ids. The file is the edge, so it is validated here once and
 * everything after trusts it. Fixture ids are the set's own vocabulary: the database's record ids differ
 * per seeding, so the caller maps them back before scoring.
 */

/** A set name becomes a directory and part of idempotency keys: a slug, never containing '/' or ':'. */
export const GoldenSetName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/i, 'a golden set name is a slug (letters, digits, . _ -)');

/** Fixture and query ids are fixed strings chosen by the author, e.g. "f-refund-window" or "q-03". */
const StableId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, 'an id is 1–128 letters, digits or . _ : -');

/**
 * One fixture. Besides the fields below, anything a write accepts (about, rationale, sensitivity, ext …)
 * passes through untouched into the seed plan; the write path validates it when seeding.
 */
export const GoldenFixture = z
  .looseObject({
    id: StableId,
    /** Defaults to the set's namespace; must lie within it, so seeding never writes outside the set. */
    namespace: NamespacePath.optional(),
    class: z.enum(RecordClasses),
    statement: Statement,
    validFrom: Instant.optional(),
    validTo: Instant.optional(),
    rationale: z.string().min(1).optional(),
  })
  .refine((f) => !f.validTo || !f.validFrom || f.validTo > f.validFrom, {
    message: 'validTo must be after validFrom',
    path: ['validTo'],
  })
  .refine((f) => f.class !== 'DECISION' || !!f.rationale, {
    message: 'a DECISION needs a rationale',
    path: ['rationale'],
  });
export type GoldenFixture = z.infer<typeof GoldenFixture>;

export const GoldenQuery = z.strictObject({
  id: StableId,
  query: z.string().min(1).max(2000),
  /** The purpose recall is asked with (it is audited like any other read). */
  purpose: z.string().min(1).max(200),
  /** Where the query is asked; defaults to the set's namespace and must lie within it. */
  namespace: NamespacePath.optional(),
  /** Categories the report groups by, e.g. "constraint", "multi-hop". */
  tags: z.array(z.string().min(1).max(64)).max(16).default([]),
  /** The fixture ids a good answer contains. */
  relevant: z.array(StableId).min(1).max(100),
  /** Optional graded relevance (> 0) for nDCG; a relevant id without a grade has grade 1. */
  grades: z.record(StableId, z.number().positive().max(100)).optional(),
  /** This query's cut-off for the @k metrics; defaults to the run's k. */
  k: z.int().min(1).max(100).optional(),
});
export type GoldenQuery = z.infer<typeof GoldenQuery>;

const GoldenSetFields = z.strictObject({
  name: GoldenSetName,
  version: z.int().min(1),
  description: z.string().max(2000).optional(),
  namespace: NamespacePath,
  fixtures: z.array(GoldenFixture).min(1).max(10_000),
  queries: z.array(GoldenQuery).min(1).max(10_000),
});
type GoldenSetFields = z.infer<typeof GoldenSetFields>;

/** Each fixture id once, each fixture inside the set's namespace. Returns the set's fixture ids. */
function checkFixtures(set: GoldenSetFields, ctx: z.RefinementCtx): Set<string> {
  const fixtureIds = new Set<string>();
  set.fixtures.forEach((f, i) => {
    if (fixtureIds.has(f.id)) {
      ctx.addIssue({
        code: 'custom',
        path: ['fixtures', i, 'id'],
        message: `duplicate fixture id "${f.id}"`,
      });
    }
    fixtureIds.add(f.id);
    if (f.namespace && !withinNamespace(f.namespace, set.namespace)) {
      ctx.addIssue({
        code: 'custom',
        path: ['fixtures', i, 'namespace'],
        message: `fixture "${f.id}" lies outside the set's namespace "${set.namespace}"`,
      });
    }
  });
  return fixtureIds;
}

/** Query `i`'s relevant list names fixtures of the set, each once; its grades only fixtures of that list. */
function checkJudgements(
  q: GoldenQuery,
  i: number,
  fixtureIds: ReadonlySet<string>,
  ctx: z.RefinementCtx,
): void {
  const relevant = new Set<string>();
  q.relevant.forEach((id, j) => {
    if (relevant.has(id)) {
      ctx.addIssue({
        code: 'custom',
        path: ['queries', i, 'relevant', j],
        message: `query "${q.id}" lists relevant fixture "${id}" twice`,
      });
    }
    relevant.add(id);
    if (!fixtureIds.has(id)) {
      ctx.addIssue({
        code: 'custom',
        path: ['queries', i, 'relevant', j],
        message: `query "${q.id}" names relevant fixture "${id}", which is not in the set`,
      });
    }
  });
  for (const id of Object.keys(q.grades ?? {})) {
    if (!relevant.has(id)) {
      ctx.addIssue({
        code: 'custom',
        path: ['queries', i, 'grades', id],
        message: fixtureIds.has(id)
          ? `query "${q.id}" grades fixture "${id}", which is not in its relevant list`
          : `query "${q.id}" grades fixture "${id}", which is not in the set`,
      });
    }
  }
}

/** Each query id once, each query asked inside the set's namespace, its judgements naming the set's fixtures. */
function checkQueries(set: GoldenSetFields, fixtureIds: ReadonlySet<string>, ctx: z.RefinementCtx): void {
  const queryIds = new Set<string>();
  set.queries.forEach((q, i) => {
    if (queryIds.has(q.id)) {
      ctx.addIssue({ code: 'custom', path: ['queries', i, 'id'], message: `duplicate query id "${q.id}"` });
    }
    queryIds.add(q.id);
    if (q.namespace && !withinNamespace(q.namespace, set.namespace)) {
      ctx.addIssue({
        code: 'custom',
        path: ['queries', i, 'namespace'],
        message: `query "${q.id}" is asked outside the set's namespace "${set.namespace}"`,
      });
    }
    checkJudgements(q, i, fixtureIds, ctx);
  });
}

export const GoldenSet = GoldenSetFields.superRefine((set, ctx) => {
  checkQueries(set, checkFixtures(set, ctx), ctx);
});
export type GoldenSet = z.infer<typeof GoldenSet>;

/** Validates a parsed golden-set file; every problem becomes one BAD_USER_INPUT listing all of them. */
export function parseGoldenSet(input: unknown): GoldenSet {
  return parseCommand(GoldenSet, input);
}

/**
 * The content hash of a validated set: sha256 of its canonical JSON. Formatting and key order of the file
 * do not change it; any change to a fixture, a query or a judgement does. Stored with every run, so two
 * runs are known to have measured the same thing.
 */
export function goldenSetHash(set: GoldenSet): string {
  return sha256Hex(canonicalJson(set));
}

/** The namespace a fixture is written to. */
export const fixtureNamespace = (set: GoldenSet, f: GoldenFixture): string => f.namespace ?? set.namespace;

/** The namespace a query is asked in. */
export const queryNamespace = (set: GoldenSet, q: GoldenQuery): string => q.namespace ?? set.namespace;
