import type { CypherExecutor, StatementRun } from '../../src/adapters/neo4j/executor.ts';

/** Every statement `work` sends through the executor, as it ran (the executor's observer). */
export async function statementsOf(
  db: CypherExecutor,
  work: () => Promise<unknown>,
): Promise<StatementRun[]> {
  const runs: StatementRun[] = [];
  db.observer = (r) => runs.push(r);
  try {
    await work();
  } finally {
    db.observer = undefined;
  }
  return runs;
}

/**
 * The database's share of a recall, steadier than end-to-end latency for comparing two builds: the
 * statements `n` recalls send (caught by the executor's observer), each run again alone, best of three.
 * Server time is Neo4j's (result available + consumed after); wall time adds the round trip and the
 * driver's decoding. Printed as the mean per recall, in total and per statement.
 */
export async function replayStatements(
  db: CypherExecutor,
  n: number,
  recallOnce: () => Promise<unknown>,
): Promise<string> {
  const per = new Map<string, { server: number; wall: number }>();
  for (let i = 0; i < n; i++) {
    for (const r of await statementsOf(db, recallOnce)) {
      let best = { server: Infinity, wall: Infinity };
      for (let rep = 0; rep < 3; rep++) {
        const t0 = performance.now();
        const res = await db.read('bench.replay', r.cypher, r.params);
        const wall = performance.now() - t0;
        const s = res.summary as unknown as { resultAvailableAfter: unknown; resultConsumedAfter: unknown };
        if (wall < best.wall)
          best = { wall, server: Number(s.resultAvailableAfter) + Number(s.resultConsumedAfter) };
      }
      const e = per.get(r.op) ?? { server: 0, wall: 0 };
      per.set(r.op, { server: e.server + best.server / n, wall: e.wall + best.wall / n });
    }
  }
  const f = (x: number) => x.toFixed(1);
  const total = [...per.values()].reduce((a, e) => ({ server: a.server + e.server, wall: a.wall + e.wall }), {
    server: 0,
    wall: 0,
  });
  const parts = [...per].map(([op, e]) => `${op.replace(/^recall\./, '')} ${f(e.server)} / ${f(e.wall)}`);
  return `total ${f(total.server)} / ${f(total.wall)} ms (${parts.join(', ')})`;
}
