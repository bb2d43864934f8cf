import { describe, expect, it } from 'vitest';
import neo4j, { type Driver } from 'neo4j-driver';
import { CypherExecutor, type StatementRun } from '../../src/adapters/neo4j/executor.ts';

/**
 * A single read runs as an auto-commit transaction (one round trip) and is retried on transient errors
 * as the driver would retry a managed read; anything else fails at once, mapped to a typed error.
 * The driver is a fake: what is under test is the executor's own loop, not Neo4j.
 */
function fakeDriver(outcomes: Array<Error | { records: unknown[] }>) {
  const calls: Array<{ text: string; mode: string }> = [];
  let closed = 0;
  const driver = {
    session: (cfg: { defaultAccessMode: string }) => ({
      run: async (q: { text: string }) => {
        calls.push({ text: q.text, mode: cfg.defaultAccessMode });
        const next = outcomes.shift();
        if (!next) throw new Error('no more outcomes');
        if (next instanceof Error) throw next;
        return { records: next.records, summary: {} };
      },
      close: async () => {
        closed++;
      },
      executeRead: () => {
        throw new Error('a single read must not open a managed transaction');
      },
    }),
  } as unknown as Driver;
  return { driver, calls, closed: () => closed };
}

const transient = () =>
  new neo4j.Neo4jError('database unavailable', 'Neo.TransientError.General.DatabaseUnavailable', '50N00', '');
const syntax = () => new neo4j.Neo4jError('bad', 'Neo.ClientError.Statement.SyntaxError', '42001', '');

describe('CypherExecutor.read', () => {
  it('runs one auto-commit READ statement and reports it to the observer', async () => {
    const f = fakeDriver([{ records: [1, 2] }]);
    const db = new CypherExecutor(f.driver, 'neo4j');
    const seen: StatementRun[] = [];
    db.observer = (r) => seen.push(r);
    const res = await db.read('probe', 'RETURN 1', { a: 1 });
    expect(res.records).toHaveLength(2);
    expect(f.calls).toEqual([{ text: 'RETURN 1', mode: neo4j.session.READ }]);
    expect(seen.map((s) => [s.op, s.rows])).toEqual([['probe', 2]]);
    expect(f.closed()).toBe(1);
  });

  it('retries a transient error and returns the later answer, closing every session', async () => {
    const f = fakeDriver([transient(), transient(), { records: [1] }]);
    const res = await new CypherExecutor(f.driver, 'neo4j').read('probe', 'RETURN 1');
    expect(res.records).toHaveLength(1);
    expect(f.calls).toHaveLength(3);
    expect(f.closed()).toBe(3);
  });

  it('does not retry a client error: it fails once, as INTERNAL', async () => {
    const f = fakeDriver([syntax(), { records: [1] }]);
    await expect(new CypherExecutor(f.driver, 'neo4j').read('probe', 'RETURN')).rejects.toMatchObject({
      code: 'INTERNAL',
    });
    expect(f.calls).toHaveLength(1);
  });
});
