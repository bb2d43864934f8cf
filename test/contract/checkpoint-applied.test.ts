import { afterAll, describe, expect, it } from 'vitest';
import { contractGraph } from '../support/contract-graph.ts';
import { recordState } from '../support/record-state.ts';

/**
 * Read-your-writes against a real Neo4j that applies each projection transaction while others read: a
 * waiter releases a write when the checkpoint covers it, and the caller then reads what it wrote. A plain
 * read of the checkpoint could show it before the record of the same transaction (50, 89 and 91 of 400 in three
 * runs of this loop); `checkpointsApplied` reads each checkpoint under its lock, which a projection
 * transaction lets go of only once applied.
 */
const c = await contractGraph('checkpoint-applied');
afterAll(async () => c.cleanup());

describe('checkpoints read for read-your-writes', () => {
  it('every checkpoint read under its lock is one whose transaction wrote a record that can be read at once', async () => {
    const N = 400;
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < N; i++)
        await c.project({
          records: [
            recordState({
              tenant: c.tenant,
              id: `r${i}`,
              namespace: 'w',
              subject: `s${i}`,
              text: `note ${i}`,
              sensitivity: 'PUBLIC',
              embedding: { modelId: 'm', vector: [1, 0, 0, 0] },
            }),
          ],
        });
      writing = false;
    })();
    let seen = -1n;
    let checked = 0;
    const missing: bigint[] = [];
    while (writing) {
      const offset = BigInt((await c.graph.projector.checkpointsApplied(c.topic))[0]?.offset ?? -1);
      if (offset <= seen) continue;
      seen = offset;
      checked++;
      // project() moves the checkpoint by one per transaction: offset k is the transaction of record k − 1
      const r = await c.db.read('test.record', 'MATCH (n:Record {tenant: $t, id: $id}) RETURN n.id', {
        t: c.tenant,
        id: `r${offset - 1n}`,
      });
      if (r.records.length === 0) missing.push(offset);
    }
    await writer;
    console.log(
      `checkpoints applied: ${checked} new checkpoints read, ${missing.length} records not readable`,
    );
    expect(checked).toBeGreaterThan(N / 4);
    expect(missing).toEqual([]);
  }, 300_000);
});
