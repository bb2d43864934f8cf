import { afterAll, describe, expect, it } from 'vitest';
import { contractGraph } from '../support/contract-graph.ts';

/**
 * ProjectionTx.lockCheckpoint against Neo4j: a projector that waited for another's lock on the same
 * partition reads the offset that other committed, not the one from before (after a rebalance, two
 * members can hold batches of one partition for a moment; applyBatch skips what the checkpoint covers).
 */

const c = await contractGraph('checkpoint-lock');
const { graph, topic } = c;
afterAll(() => c.cleanup());

describe('the checkpoint lock', () => {
  it('a second transaction waiting on the lock reads the offset the first committed', async () => {
    await graph.projector.projection(async (tx) => {
      await tx.lockCheckpoint(topic, 0);
      await tx.setCheckpoint(topic, 0, 9n);
    });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const firstLocked = new Promise<void>((r) => (locked = r));
    const first = graph.projector.projection(async (tx) => {
      await tx.lockCheckpoint(topic, 0);
      await tx.setCheckpoint(topic, 0, 19n);
      locked();
      await gate;
    });
    await firstLocked;
    const seen: bigint[] = [];
    const second = graph.projector.projection(async (tx) => {
      seen.push(await tx.lockCheckpoint(topic, 0));
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(seen).toEqual([]); // the second is waiting on the lock, not done before the first commits
    release();
    await Promise.all([first, second]);
    expect(seen.at(-1)).toBe(19n);
    const cps = await graph.projector.checkpoints(topic);
    expect(cps.find((x) => x.partition === 0)?.offset).toBe('19');
  });
});
