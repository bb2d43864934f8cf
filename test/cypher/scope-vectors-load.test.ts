import { describe, expect, it } from 'vitest';
import { ScopeVectors } from '../../src/adapters/neo4j/scope-vectors.ts';
import { StampSettling } from '../../src/adapters/neo4j/stamp-settling.ts';
import { Ranking } from '../../src/adapters/neo4j/vector-shards.ts';
import { recordingExecutor, type Answers } from './recording-executor.ts';

/** Stamps trusted as soon as read: these cases are about what is loaded and held, not when a stamp settles. */
const atOnce = () => new StampSettling(() => Date.now(), 0);

/**
 * Loading the vectors a process holds (scope-vectors.ts): callers that find their namespaces stale
 * together share one load statement, whatever their tenants, and each row lands in its own tenant's shard.
 */
describe('vector loads asked for together', () => {
  it("two tenants' stale namespaces are loaded in one statement, each into its own shard", async () => {
    const db = recordingExecutor({
      'recall.vectorStamps': [
        { i: 0, ns: 'acme/eng', epoch: 'e1', seq: 1 },
        { i: 1, ns: 'acme/eng', epoch: 'e2', seq: 3 },
      ],
      'recall.vectorLoad': [
        { tenant: 't1', ns: 'acme/eng', id: 'a', model: 'm1', vector: [1, 0] },
        { tenant: 't2', ns: 'acme/eng', id: 'b', model: 'm1', vector: [0, 1] },
        { tenant: 't2', ns: 'acme/eng', id: 'c', model: 'm1', vector: [1, 1] },
      ],
    });
    const memory = new ScopeVectors(db, 1000, atOnce());
    const [one, two] = await Promise.all([memory.shards('t1', 'acme/eng'), memory.shards('t2', 'acme/eng')]);
    const loads = db.sent.filter((s) => s.op === 'recall.vectorLoad').map((s) => s.params['loads']);
    expect(loads).toEqual([
      [
        { tenant: 't1', ns: 'acme/eng', since: -1 },
        { tenant: 't2', ns: 'acme/eng', since: -1 },
      ],
    ]);
    expect(one.map((s) => [s.epoch, s.size])).toEqual([['e1', 1]]);
    expect(two.map((s) => [s.epoch, s.size])).toEqual([['e2', 2]]);
    // Both up to their stamps now: asked again together, nothing is loaded.
    await Promise.all([memory.shards('t1', 'acme/eng'), memory.shards('t2', 'acme/eng')]);
    expect(db.sent.filter((s) => s.op === 'recall.vectorLoad')).toHaveLength(1);
  });

  it('a namespace held is asked what changed; only records not held at that version and model are read with their vector', async () => {
    const answers: Answers = {
      'recall.vectorStamps': [{ i: 0, ns: 'acme/eng', epoch: 'e1', seq: 1 }],
      'recall.vectorLoad': [
        { tenant: 't1', ns: 'acme/eng', id: 'a', model: 'm1', version: 1, vector: [1, 0] },
        { tenant: 't1', ns: 'acme/eng', id: 'b', model: 'm1', version: 1, vector: [1, 0.1] },
        { tenant: 't1', ns: 'acme/eng', id: 'x', model: 'm1', version: 1, vector: [1, 0.2] },
      ],
    };
    const db = recordingExecutor(answers);
    const memory = new ScopeVectors(db, 1000, atOnce());
    const ranked = async () => {
      const r = new Ranking(await memory.shards('t1', 'acme/eng'), 'm1', [0, 1]);
      return r.top(r.size);
    };
    expect(await ranked()).toEqual(['x', 'b', 'a']);
    expect(db.sent.filter((s) => s.op === 'recall.vectorFetch')).toEqual([]);
    // Since then: a written again at its version (a reinforcement), b revised, c new, x erased, and
    // m moved here and away again before its vector was read.
    answers['recall.vectorStamps'] = [{ i: 0, ns: 'acme/eng', epoch: 'e1', seq: 2 }];
    answers['recall.vectorLoad'] = [
      { tenant: 't1', ns: 'acme/eng', id: 'a', model: 'm1', version: 1, vector: null },
      { tenant: 't1', ns: 'acme/eng', id: 'b', model: 'm1', version: 2, vector: null },
      { tenant: 't1', ns: 'acme/eng', id: 'c', model: 'm1', version: 1, vector: null },
      { tenant: 't1', ns: 'acme/eng', id: 'x', model: null, version: 2, vector: null },
      { tenant: 't1', ns: 'acme/eng', id: 'm', model: 'm1', version: 3, vector: null },
    ];
    answers['recall.vectorFetch'] = [
      { tenant: 't1', ns: 'acme/eng', id: 'b', model: 'm1', version: 2, vector: [0, 1] },
      { tenant: 't1', ns: 'acme/eng', id: 'c', model: 'm1', version: 1, vector: [0.5, 1] },
      { tenant: 't1', ns: 'acme/eng', id: 'm', model: null, version: null, vector: null },
    ];
    expect(await ranked()).toEqual(['b', 'c', 'a']);
    const load = db.sent.filter((s) => s.op === 'recall.vectorLoad')[1]!;
    expect(load.params['loads']).toEqual([{ tenant: 't1', ns: 'acme/eng', since: 1 }]);
    expect(load.cypher).toContain('CASE WHEN l.since < 0 THEN n.embedding END AS vector');
    const fetched = db.sent.filter((s) => s.op === 'recall.vectorFetch');
    expect(fetched.map((s) => s.params['ids'])).toEqual([
      ['b', 'c', 'm'].map((id) => ({ tenant: 't1', ns: 'acme/eng', id })),
    ]);
  });
});
