import { describe, expect, it } from 'vitest';
import { AnchorOrders } from '../../src/adapters/neo4j/anchor-orders.ts';
import { HeldEntities } from '../../src/adapters/neo4j/entity-held.ts';
import { RankedMemo } from '../../src/adapters/neo4j/ranked-memo.ts';
import { ScopeVectors } from '../../src/adapters/neo4j/scope-vectors.ts';
import { StampSettling } from '../../src/adapters/neo4j/stamp-settling.ts';
import { Ranking } from '../../src/adapters/neo4j/vector-shards.ts';
import { recordingExecutor, type Answers } from './recording-executor.ts';

/**
 * What a process holds is trusted through a stamp only once that stamp has settled (stamp-settling.ts):
 * Neo4j may show a transaction's stamp before every record it wrote, so data read at a stamp first seen
 * now counts as complete through the number before, and is read again until the stamp has settled.
 */
const clock = { t: 0 };
const settling = () => new StampSettling(() => clock.t, 1_000);
const ops = (db: ReturnType<typeof recordingExecutor>, op: string) => db.sent.filter((s) => s.op === op);

describe('held data is trusted through a stamp once it has settled', () => {
  it('a record of stamp N not yet visible when its namespace was first read is ranked by the next recall', async () => {
    clock.t = 0;
    const row = (id: string, vector: number[]) => ({
      tenant: 't1',
      ns: 'acme',
      id,
      model: 'm1',
      version: 1,
      vector,
    });
    const answers: Answers = {
      'recall.vectorStamps': [{ i: 0, ns: 'acme', epoch: 'e1', seq: 3 }],
      // stamp 3's transaction half applied: its record b not there yet
      'recall.vectorLoad': [row('a', [1, 0])],
    };
    const db = recordingExecutor(answers);
    const memory = new ScopeVectors(db, 1000, settling());
    const ranked = async () => {
      const r = new Ranking(await memory.shards('t1', 'acme'), 'm1', [1, 0]);
      return r.top(r.size);
    };
    expect(await ranked()).toEqual(['a']);
    answers['recall.vectorLoad'] = [{ ...row('b', [0, 1]), vector: null }];
    answers['recall.vectorFetch'] = [row('b', [0, 1])];
    clock.t = 500; // same stamp, not settled: what it numbered is read again
    expect(await ranked()).toEqual(['a', 'b']);
    clock.t = 1_000; // settled: read once more, then trusted
    await ranked();
    await ranked();
    expect(ops(db, 'recall.vectorLoad').map((s) => s.params['loads'])).toEqual([
      [{ tenant: 't1', ns: 'acme', since: -1 }],
      [{ tenant: 't1', ns: 'acme', since: 2 }],
      [{ tenant: 't1', ns: 'acme', since: 2 }],
    ]);
    // a later number shows the one before it whole at once
    answers['recall.vectorStamps'] = [{ i: 0, ns: 'acme', epoch: 'e1', seq: 5 }];
    await ranked();
    await ranked();
    expect(
      ops(db, 'recall.vectorLoad')
        .slice(3)
        .map((s) => s.params['loads']),
    ).toEqual([[{ tenant: 't1', ns: 'acme', since: 3 }], [{ tenant: 't1', ns: 'acme', since: 4 }]]);
  });

  it("the graph arm's orders read at an unsettled stamp are used, not held", async () => {
    clock.t = 0;
    const rows = [['r1', 'acme', 0, 0.9]];
    const db = recordingExecutor({
      'recall.graphOrder': [{ stamps: [['acme', 'e1', 3]], aid: 'kestrel', ranked: rows }],
    });
    const orders = new AnchorOrders(db, settling());
    const stamp = { key: 't1\u0000acme', ns: 'acme', epoch: 'e1', seq: 3 };
    expect(await orders.of('t1', ['kestrel'], [stamp])).toEqual([rows]);
    expect(await orders.of('t1', ['kestrel'], [stamp])).toEqual([rows]);
    clock.t = 1_000; // read at a settled stamp: held from now on
    await orders.of('t1', ['kestrel'], [stamp]);
    await orders.of('t1', ['kestrel'], [stamp]);
    expect(ops(db, 'recall.graphOrder')).toHaveLength(3);
  });

  it("the scope arm's rankings are held only when loaded at settled stamps", async () => {
    const memo = new RankedMemo<string>();
    const stamps = [{ key: 't1\u0000acme', ns: 'acme', epoch: 'e1', seq: 3 }];
    let loads = 0;
    const load = () => Promise.resolve((loads++, ['r1']));
    await memo.get('k', stamps, load, () => false);
    await memo.get('k', stamps, load, () => false);
    expect(loads).toBe(2);
    await memo.get('k', stamps, load, () => true);
    await memo.get('k', stamps, load, () => true);
    expect(loads).toBe(3);
  });

  it("a tenant's entity index read at an unsettled stamp is brought up to it by the next lookup", async () => {
    clock.t = 0;
    const entity = (id: string) => ({
      id,
      name: id,
      aliases: [],
      externalIds: [],
      model: null,
      vector: null,
    });
    const answers: Answers = {
      'entity.stamps': [{ i: 0, epoch: 'e1', seq: 2 }],
      'entity.load': [entity('kestrel')],
    };
    const db = recordingExecutor(answers);
    const held = new HeldEntities(db, 1000, settling());
    expect((await held.of('t1')).named(['kestrel'])).toEqual(['kestrel']);
    answers['entity.load'] = [entity('osprey')]; // stamp 2's second entity, visible now
    expect((await held.of('t1')).named(['osprey'])).toEqual(['osprey']);
    clock.t = 1_000;
    await held.of('t1');
    await held.of('t1');
    expect(ops(db, 'entity.load').map((s) => s.params['since'])).toEqual([-1, 1, 1]);
  });
});
