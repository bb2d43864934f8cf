import { randomUUID } from 'node:crypto';
import type { Executor } from './executor.ts';

/**
 * Migrating is done by one process at a time. Two replicas (or a test worker next to a server) starting
 * on an empty database would otherwise both run the schema statements — concurrent index creation fails
 * with "equivalent index already exists" — and both run the data backfills. The lock is a lease on one
 * MigrationLock node, unique by id: held until the holder releases it, or until the lease lapses, so a
 * process killed mid-migration does not block every later start. Migrations are idempotent (IF NOT EXISTS,
 * recorded per id), so the next holder after a lapse simply finishes the work. The holder renews its
 * lease while it works, so the lease can be short: a start after a killed one waits a minute at most.
 */
export interface LockOptions {
  /** How long the lock outlives its holder's last renewal (a killed holder's lock lapses after it). */
  readonly leaseMs?: number;
  /** How often a waiting process asks again. */
  readonly pollMs?: number;
  /** Who asks (one per call unless given: each call is its own holder). */
  readonly holder?: string;
}

const LOCK_ID = 'migrations';

export async function withMigrationLock<T>(
  db: Executor,
  fn: () => Promise<T>,
  opts: LockOptions = {},
): Promise<T> {
  const { leaseMs = 60_000, pollMs = 250, holder = randomUUID() } = opts;
  await ensureLockConstraint(db);
  while (!(await tryAcquire(db, holder, leaseMs))) await new Promise((r) => setTimeout(r, pollMs));
  const renew = setInterval(() => {
    db.write(
      'migrations.renewLock',
      'MATCH (l:MigrationLock {id: $id, holder: $holder}) SET l.until = $until',
      { id: LOCK_ID, holder, until: Date.now() + leaseMs },
    ).catch(() => undefined); // a missed renewal only shortens the lease; the next one retries
  }, leaseMs / 3);
  try {
    return await fn();
  } finally {
    clearInterval(renew);
    await db.write(
      'migrations.unlock',
      'MATCH (l:MigrationLock {id: $id, holder: $holder}) REMOVE l.holder, l.until',
      { id: LOCK_ID, holder },
    );
  }
}

/** Without the constraint two first MERGEs could create two lock nodes; creating it can itself race. */
async function ensureLockConstraint(db: Executor): Promise<void> {
  const create = () =>
    db.autoCommit(
      'migrations.lockConstraint',
      'CREATE CONSTRAINT migration_lock IF NOT EXISTS FOR (l:MigrationLock) REQUIRE l.id IS UNIQUE',
    );
  try {
    await create();
  } catch {
    // Another process created it at the same moment: the second attempt finds it and does nothing.
    await create();
  }
}

/**
 * One transaction: the MERGE finds or creates the node, the first SET takes its write lock before the
 * holder is read (so two takers serialise and the second sees the first's commit), then the lock is
 * taken only if it is free or its lease has lapsed.
 */
async function tryAcquire(db: Executor, holder: string, leaseMs: number): Promise<boolean> {
  const now = Date.now();
  const res = await db.write<{ holder: string | null }>(
    'migrations.lock',
    `MERGE (l:MigrationLock {id: $id})
     SET l._lock = true
     WITH l, (l.holder IS NULL OR l.until < $now) AS free
     SET l.holder = CASE WHEN free THEN $holder ELSE l.holder END,
         l.until = CASE WHEN free THEN $until ELSE l.until END
     REMOVE l._lock
     RETURN l.holder AS holder`,
    { id: LOCK_ID, holder, now, until: now + leaseMs },
  );
  return res.records[0]?.get('holder') === holder;
}
