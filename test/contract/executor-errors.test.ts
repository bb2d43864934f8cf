import neo4j from 'neo4j-driver';
import { afterAll, describe, expect, it } from 'vitest';
import { CypherExecutor } from '../../src/adapters/neo4j/executor.ts';
import { isMuninnError } from '../../src/domain/errors.ts';
import { testConfig } from '../support/harness.ts';

/**
 * How the executor names the real driver's failures against the real Neo4j. A failure that says nothing
 * about the statement must be UNAVAILABLE (retryable): the projector retries those, and sets the events
 * of any other failure aside to the dead-letter topic, out of the graph.
 */

const c = testConfig().neo4j;
const auth = c.password ? neo4j.auth.basic(c.user, c.password) : undefined;
// One connection, given up on after 300 ms: a second transaction cannot get one while the first runs.
const driver = neo4j.driver(c.uri, auth, {
  maxConnectionPoolSize: 1,
  connectionAcquisitionTimeout: 300,
  logging: { level: 'error', logger: () => undefined },
});
const db = new CypherExecutor(driver, c.database);
afterAll(() => db.close());

const failureOf = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e,
  );

describe('executor errors from the real driver', () => {
  it('a pool with no free connection in time is UNAVAILABLE, retryable, and the driver message stays in the cause', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = db.writeTx('test.hold', async (tx) => {
      await tx.run('RETURN 1');
      await held;
    });
    await new Promise((r) => setTimeout(r, 50));
    const e = await failureOf(db.writeTx('test.second', (tx) => tx.run('RETURN 2')));
    release();
    await first;
    expect(isMuninnError(e) && e.code).toBe('UNAVAILABLE');
    expect(isMuninnError(e) && e.retryable).toBe(true);
    expect(String((e as Error).cause)).toMatch(/Connection acquisition timed out/);
  });

  it('a statement Neo4j refuses is INTERNAL, not retryable', async () => {
    const e = await failureOf(db.writeTx('test.bad', (tx) => tx.run('RETURN nosuchfunction(1)')));
    expect(isMuninnError(e) && e.code).toBe('INTERNAL');
    expect(isMuninnError(e) && e.retryable).toBe(false);
  });
});
