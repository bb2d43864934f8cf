import { afterAll, describe, expect, it } from 'vitest';
import type { EntityState, HoldState } from '../../src/domain/fold.ts';
import { contractGraph } from '../support/contract-graph.ts';
import { recordState, unitVector } from '../support/record-state.ts';

/**
 * ProjectionTx's promise (src/ports/graph.ts): each call sends its statements when it is called, and the
 * database runs them in the order sent. `applyBatch` relies on it to send a batch's statements together
 * rather than one round trip each: the loads behind the checkpoint's lock, the writes with the
 * checkpoint's move. Here nothing is awaited between the calls, and what a later statement needs from an
 * earlier one (an entity before the record about it, a namespace's stamp before its records) is there.
 */

const c = await contractGraph('projection-order');
const { db, tenant, topic, graph } = c;

const entity: EntityState = {
  tenant,
  id: 'e-heron',
  name: 'Heron',
  type: 'project',
  aliases: [],
  externalIds: [],
  sameAs: null,
  embedding: null,
};
const record = (id: string) =>
  recordState({
    tenant,
    id,
    namespace: 'acme/eng',
    subject: 'Heron',
    text: `Heron note ${id}.`,
    about: ['e-heron'],
    embedding: { modelId: 'test', vector: unitVector(0, 8) },
  });

afterAll(() => c.cleanup());

describe('a projection transaction whose calls are sent before any is awaited', () => {
  it('runs them in the order sent: the entity, then the record about it, then the checkpoint', async () => {
    const empty = { records: [], entities: [], receipts: [], episodes: [], grants: [] };
    const cp = await graph.projector.projection(async (tx) => {
      const sent = [
        tx.lockCheckpoint(topic, 0),
        tx.write({ ...empty, entities: [entity] }),
        tx.write({ ...empty, records: [record('r-1'), record('r-2')] }),
        tx.setCheckpoint(topic, 0, 7n),
        tx.load({ ...empty, records: [{ tenant, id: 'r-1' }], holds: [], findings: [] }),
      ] as const;
      const [locked, , , , loaded] = await Promise.all(sent);
      expect(locked).toBe(-1n);
      // Sent after the writes, the load sees them.
      expect(loaded.records.map((r) => r.id)).toEqual(['r-1']);
      return locked;
    });
    expect(cp).toBe(-1n);
    const rows = await db.read(
      'test.projection-order',
      `MATCH (n:Record {tenant: $tenant}) OPTIONAL MATCH (n)-[:ABOUT]->(e:Entity)
       MATCH (st:ScopeStamp {tenant: $tenant, namespace: n.namespace})
       RETURN n.id AS id, e.id AS about, n.stamp AS stamp, st.seq AS seq ORDER BY id`,
      { tenant },
    );
    expect(rows.records.map((r) => [r.get('id'), r.get('about')])).toEqual([
      ['r-1', 'e-heron'],
      ['r-2', 'e-heron'],
    ]);
    // Each record carries the number its namespace's stamp was bumped to, in the same transaction.
    for (const r of rows.records) expect(Number(r.get('stamp'))).toBe(Number(r.get('seq')));
    expect((await graph.projector.checkpoints(topic)).map((x) => x.offset)).toEqual(['7']);
  });

  it('a failing statement fails the whole transaction: nothing sent with it is kept', async () => {
    const empty = { records: [], entities: [], receipts: [], episodes: [], grants: [] };
    const failed = graph.projector.projection(async (tx) => {
      await Promise.all([
        tx.lockCheckpoint(topic, 0),
        tx.write({ ...empty, records: [record('r-3')] }),
        tx.setCheckpoint(topic, 0, 8n),
        // A map is no property value: the database refuses this statement, sent last.
        tx.write({ ...empty, holds: [{ tenant, id: 'h-bad', nested: { a: 1 } } as unknown as HoldState] }),
      ]);
    });
    await expect(failed).rejects.toThrow();
    const left = await db.read(
      'test.projection-order',
      'MATCH (n:Record {tenant: $tenant, id: $id}) RETURN count(n) AS n',
      { tenant, id: 'r-3' },
    );
    expect(Number(left.records[0]!.get('n'))).toBe(0);
    expect((await graph.projector.checkpoints(topic)).map((x) => x.offset)).toEqual(['7']);
  });

  it('a row that cannot be built rejects the write, and what was sent before it is not left unobserved', async () => {
    const empty = { records: [], entities: [], receipts: [], episodes: [], grants: [] };
    // The entity statement goes out first and fails in the database (a map is no property value); the
    // record after it has no revision, so its row cannot be built. Vitest fails the run on a rejection
    // nobody observed.
    const badEntity = { ...entity, id: 'e-bad', aliases: [{ a: 1 }] } as unknown as EntityState;
    const noRevision = { ...record('r-4'), revisions: [] };
    const failed = graph.projector.projection(async (tx) => {
      await tx.lockCheckpoint(topic, 0);
      await tx.write({ ...empty, entities: [badEntity], records: [noRevision] });
    });
    // The executor maps the error (INTERNAL); its cause is the row's TypeError, not the database's refusal.
    await expect(failed).rejects.toMatchObject({ cause: expect.any(TypeError) });
    await new Promise((r) => setTimeout(r, 200));
    const left = await db.read(
      'test.projection-order',
      'MATCH (n {tenant: $tenant}) WHERE n.id IN [$e, $r] RETURN count(n) AS n',
      { tenant, e: 'e-bad', r: 'r-4' },
    );
    expect(Number(left.records[0]!.get('n'))).toBe(0);
  });
});
