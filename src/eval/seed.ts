import { forbidden } from '../domain/errors.ts';
import type { RecordClass, Statement } from '../domain/model.ts';
import { fixtureNamespace, type GoldenSet } from './golden.ts';

/**
 * Seeding a golden set: what to write (a pure plan) and the guard that keeps it out of real databases.
 * Seeding writes fixed, invented records; in a tenant's memory they would be recalled as truth, so the
 * database has to say it is a test database before anything is written.
 */

/** The purpose every seeded write carries (reads and writes are audited with their purpose). */
export const SEED_PURPOSE = 'eval:seed';

/** The input of one seeded write, shaped like `propose`'s input. */
export interface SeedInput {
  readonly namespace: string;
  readonly class: RecordClass;
  readonly statement: Statement;
  readonly validFrom?: string;
  readonly validTo?: string;
  readonly purpose: string;
  readonly idempotencyKey: string;
  /** All fixtures of one set share a changeset, so `records(filter: { changesetId })` lists them. */
  readonly changesetId: string;
  /** Fixture fields passed through untouched (about, rationale, sensitivity, ext …). */
  readonly [extra: string]: unknown;
}

export interface SeedRecord {
  readonly fixtureId: string;
  readonly input: SeedInput;
}

/**
 * The idempotency key of a fixture: derived from the set's name and the fixture's id only, so re-seeding
 * the same set is a no-op (the write path returns the original receipt). Editing a fixture's content under
 * the same id makes the re-seed a CONFLICT rather than a silent second record: seed a fresh test database.
 * Set names are slugs without ':', so the key is unambiguous.
 */
export const fixtureIdempotencyKey = (setName: string, fixtureId: string): string =>
  `eval:${setName}:${fixtureId}`;

export const seedChangesetId = (setName: string): string => `eval:${setName}`;

/** The records to write for `set`, in fixture order. Pure: the same set always gives the same plan. */
export function seedPlan(set: GoldenSet): SeedRecord[] {
  return set.fixtures.map((f) => {
    const { id, namespace: _ns, ...fields } = f;
    return {
      fixtureId: id,
      input: {
        ...fields,
        // After the pass-through fields, so a fixture can never override where or under which key it lands.
        namespace: fixtureNamespace(set, f),
        purpose: SEED_PURPOSE,
        idempotencyKey: fixtureIdempotencyKey(set.name, id),
        changesetId: seedChangesetId(set.name),
      },
    };
  });
}

/** The port that says whether the connected database was marked as a test database (by whoever made it). */
export interface TestDatabaseMarker {
  isTestDatabase(): Promise<boolean>;
}

/**
 * Refuses (FORBIDDEN) unless the database is marked as a test database. FORBIDDEN rather than
 * BAD_USER_INPUT: the request is well-formed, but policy does not allow it against this database, and
 * retrying it will not help.
 */
export async function assertTestDatabase(marker: TestDatabaseMarker): Promise<void> {
  if ((await marker.isTestDatabase()) !== true) {
    throw forbidden('refusing to seed a golden set: the database is not marked as a test database');
  }
}

/** Checks the marker, then writes the plan in order. Returns the fixture ids written. */
export async function seedGoldenSet(
  set: GoldenSet,
  deps: { readonly database: TestDatabaseMarker; write(record: SeedRecord): Promise<void> },
): Promise<string[]> {
  await assertTestDatabase(deps.database);
  const plan = seedPlan(set);
  for (const r of plan) await deps.write(r);
  return plan.map((r) => r.fixtureId);
}
