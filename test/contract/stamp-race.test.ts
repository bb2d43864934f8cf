import { afterAll, describe, expect, it } from 'vitest';
import { HeldEntities } from '../../src/adapters/neo4j/entity-held.ts';
import type { RecordState } from '../../src/domain/fold.ts';
import type { ArmQuery, ReadScope } from '../../src/ports/graph.ts';
import { contractGraph } from '../support/contract-graph.ts';
import { entityState, recordState } from '../support/record-state.ts';

/**
 * What a process holds of the graph (the record vectors of scope-vectors.ts, the entity index of
 * entity-held.ts) against a real Neo4j that applies each projection transaction while they read: after
 * projecting writers and reading callers raced, the holders name every record and entity written. Neo4j
 * can show a stamp before the records its transaction wrote; before stamp-settling.ts trusted a stamp only
 * once settled, the vector arm lost 12–21 of these 480 records for as long as the process lived.
 */
const c = await contractGraph('stamp-race');
const { tenant, graph } = c;
const MODEL = 'test-model';
const NAMESPACES = ['race', 'race/a', 'race/b'];
const WRITERS = 8;
const WRITES = 60;
const everyone: ReadScope = { tenant, grants: [{ root: null, maxSensitivity: 'RESTRICTED' }] };
const arm = (namespace: string): ArmQuery => ({
  scope: everyone,
  namespace,
  classes: null,
  validAt: '2026-01-01T00:00:00.000Z',
  knownAt: null,
  k: WRITERS * WRITES,
});
const vector = (a: number) =>
  Array.from({ length: 8 }, (_, j) => (j === 0 ? Math.cos(a) : j === 1 ? Math.sin(a) : 0));
const rec = (id: string, namespace: string): RecordState =>
  recordState({
    tenant,
    id,
    namespace,
    subject: id,
    text: `note ${id}`,
    sensitivity: 'PUBLIC',
    embedding: { modelId: MODEL, vector: vector(Math.random()) },
  });
const entity = (id: string) => entityState(tenant, id);

afterAll(async () => c.cleanup());

describe('held graph data under projection racing its readers', () => {
  it('after writers and readers raced, the vector arm ranks every record and the entity index names every entity', async () => {
    const entities = new HeldEntities(c.db);
    const ids: string[] = [];
    let writing = true;
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; i < WRITES; i++) {
        const id = `w${w}-${i}`;
        const records = [rec(id, NAMESPACES[(w + i) % NAMESPACES.length]!)];
        // now and then a record written again beside a new one, as a contest or a reinforcement is
        if (i % 5 === 4)
          records.push({ ...rec(`w${w}-${i - 1}`, NAMESPACES[(w + i - 1) % 3]!), reinforcements: 1 });
        await c.project({ records, entities: [entity(id)] });
        ids.push(id);
      }
    });
    const readers = Array.from({ length: 4 }, async (_, r) => {
      while (writing) {
        await graph.arms.vectorArm(arm(NAMESPACES[r % NAMESPACES.length]!), vector(0), MODEL);
        await entities.of(tenant);
      }
    });
    await Promise.all(writers);
    writing = false;
    await Promise.all(readers);

    const ranked = new Set(await graph.arms.vectorArm(arm('race'), vector(0), MODEL));
    const named = new Set((await entities.of(tenant)).named(ids));
    const unranked = ids.filter((id) => !ranked.has(id));
    const unnamed = ids.filter((id) => !named.has(id));
    console.log(
      `stamp race: ${ids.length} records and entities; ${unranked.length} unranked, ${unnamed.length} unnamed`,
    );
    expect(unranked).toEqual([]);
    expect(unnamed).toEqual([]);
  }, 300_000);
});
