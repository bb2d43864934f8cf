import { describe, expect, it } from 'vitest';
import { ScopeVectors } from '../../src/adapters/neo4j/scope-vectors.ts';
import { recordingExecutor } from './recording-executor.ts';

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
    const memory = new ScopeVectors(db, 1000);
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
});
