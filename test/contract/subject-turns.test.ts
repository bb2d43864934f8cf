import { afterAll, describe, expect, it } from 'vitest';
import { CypherExecutor } from '../../src/adapters/neo4j/executor.ts';
import { Neo4jGraphStore } from '../../src/adapters/neo4j/graph-store.ts';
import { Neo4jSubjectTurns } from '../../src/adapters/neo4j/subject-turns.ts';
import { contractGraph } from '../support/contract-graph.ts';
import { testConfig } from '../support/harness.ts';

/**
 * SubjectTurns against Neo4j (adapters/neo4j/subject-turns.ts): a subject's turn is held across
 * processes (here: two drivers, as two API processes have) until released, a wait that runs out gives up
 * without taking the turn later, a holder whose connection drops gives its turns back, and no turn is
 * ever stored. Turns asked for together share one transaction, and a contended one holds the others of
 * its group no longer than the group's patience.
 */
const c = await contractGraph('subject-turns');
const { graph, tenant } = c;
/** Another API process: its own driver and pools over the same database. */
const other = (() => {
  const n = testConfig().neo4j;
  return new Neo4jGraphStore(CypherExecutor.connect(n.uri, n.user, n.password, n.database));
})();
afterAll(async () => {
  await other.db.close();
  await c.cleanup();
});

const key = (s: string) => `${tenant}\u0000${s}`;
const since = (t0: number) => performance.now() - t0;

describe('subject turns across processes', () => {
  it("a second process's turn on a subject waits until the first gives it back", async () => {
    const first = await graph.turns.hold([key('billing api')], 1_000, 10_000);
    expect(first).not.toBeNull();
    const t0 = performance.now();
    const second = other.turns.hold([key('billing api')], 5_000, 10_000);
    await new Promise((r) => setTimeout(r, 300));
    first!.release();
    const got = await second;
    expect(got).not.toBeNull();
    expect(since(t0)).toBeGreaterThanOrEqual(290);
    got!.release();
  });

  it('turns on other subjects, and on other tenants, do not wait', async () => {
    const held = await graph.turns.hold([key('cart api')], 1_000, 10_000);
    const elsewhere = await other.turns.hold([key('search api'), `x-${tenant}\u0000cart api`], 200, 10_000);
    expect(elsewhere).not.toBeNull();
    elsewhere!.release();
    held!.release();
  });

  it('a wait that runs out returns null and never takes the turn afterwards', async () => {
    const first = await graph.turns.hold([key('queue api')], 1_000, 10_000);
    expect(await other.turns.hold([key('queue api')], 200, 10_000)).toBeNull();
    first!.release();
    // Were the given-up wait still queued, it would take the turn now and this one would wait behind it.
    const third = await graph.turns.hold([key('queue api')], 1_000, 10_000);
    expect(third).not.toBeNull();
    third!.release();
  });

  it('a holder whose process goes away gives its turns back (its connection closes)', async () => {
    const n = testConfig().neo4j;
    const doomed = new Neo4jGraphStore(CypherExecutor.connect(n.uri, n.user, n.password, n.database));
    expect(await doomed.turns.hold([key('ledger api'), key('mail api')], 1_000, 60_000)).not.toBeNull();
    await doomed.db.close(); // never released
    const next = await other.turns.hold([key('mail api')], 5_000, 10_000);
    expect(next).not.toBeNull();
    next!.release();
  });

  it('a turn never released is given back after holdMs (Neo4j ends the transaction)', async () => {
    const t0 = performance.now();
    expect(await graph.turns.hold([key('auth api')], 1_000, 500)).not.toBeNull();
    const next = await other.turns.hold([key('auth api')], 10_000, 10_000);
    expect(next).not.toBeNull();
    expect(since(t0)).toBeLessThan(9_000);
    next!.release();
  });

  it('no turn is stored: the holds leave no SubjectTurn node', async () => {
    const held = await graph.turns.hold([key('store api')], 1_000, 10_000);
    held!.release();
    await new Promise((r) => setTimeout(r, 100));
    const res = await c.db.read<{ n: number }>('test.turns', 'MATCH (t:SubjectTurn) RETURN count(t) AS n');
    expect(res.records[0]!.get('n')).toBe(0);
  });

  it('turns asked for in one loop turn are taken in one transaction, held until the last is given back', async () => {
    const statements: string[] = [];
    c.db.observer = (run) => void statements.push(run.op);
    const [a, b, d] = await Promise.all(
      ['group a', 'group b', 'group d'].map((s) => graph.turns.hold([key(s)], 1_000, 10_000)),
    );
    c.db.observer = undefined;
    expect(statements).toEqual(['subject.turn']);
    a!.release();
    b!.release();
    expect(await other.turns.hold([key('group a')], 300, 10_000)).toBeNull(); // d still holds the group
    d!.release();
    const after = await other.turns.hold([key('group a')], 5_000, 10_000);
    expect(after).not.toBeNull();
    after!.release();
  });

  it('a group with a subject held elsewhere lets its other turns be taken alone after its patience', async () => {
    const patient = new Neo4jSubjectTurns(c.db, 150);
    const elsewhere = await other.turns.hold([key('hot api')], 1_000, 10_000);
    const t0 = performance.now();
    const [hot, cold] = [
      patient.hold([key('hot api')], 5_000, 10_000),
      patient.hold([key('cold api')], 5_000, 10_000),
    ];
    const coldHeld = await cold;
    expect(coldHeld).not.toBeNull();
    expect(since(t0)).toBeGreaterThanOrEqual(140);
    expect(since(t0)).toBeLessThan(2_000);
    elsewhere!.release();
    const hotHeld = await hot;
    expect(hotHeld).not.toBeNull();
    hotHeld!.release();
    coldHeld!.release();
  });
});
