import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntityState } from '../../src/domain/fold.ts';
import { Neo4jGraphStore } from '../../src/adapters/neo4j/graph-store.ts';
import { ERASED_MARK } from '../../src/domain/sealing.ts';
import type { ReadScope } from '../../src/ports/graph.ts';
import type { EntityProbe } from '../../src/ports/ingest-lookups.ts';
import { contractGraph } from '../support/contract-graph.ts';
import { recordState, unitVector } from '../support/record-state.ts';

/**
 * Entity resolution's facts and recall's anchors, found through the entity index held in process
 * (entity-held.ts) and checked by Neo4j, against a real Neo4j: exact matches by name, alias, external id
 * and id; the nearest visible entity even when invisible ones fill the first window of the ranking; an
 * entity written after the index was loaded is found, and an erased one is no longer matched. One graph
 * store for the whole file, so later cases run against the index earlier ones loaded.
 */

const c = await contractGraph('entity-facts');
const { graph, tenant } = c;
const M = 'hashing-v1-384';
const dims = 384;

/** A unit vector between axes 0 and 1: the larger `w`, the nearer to axis 0. */
const toward = (w: number): number[] => {
  const v = unitVector(0, dims).map((x) => x * w);
  v[1] = Math.sqrt(1 - w * w);
  return v;
};

const entity = (o: Partial<EntityState> & { id: string; name: string }): EntityState => ({
  tenant,
  type: null,
  aliases: [],
  externalIds: [],
  sameAs: null,
  embedding: null,
  ...o,
});

const full: ReadScope = { tenant, grants: [{ root: null, maxSensitivity: 'RESTRICTED' }] };
/** Sees acme/eng only: an entity is visible to it through a record in acme/eng about it. */
const eng: ReadScope = { tenant, grants: [{ root: 'acme/eng', maxSensitivity: 'RESTRICTED' }] };

const probe = (o: Partial<EntityProbe>): EntityProbe => ({
  vector: null,
  modelId: M,
  defaultId: 'e-none',
  ...o,
});

// Twenty entities nearer to axis 0 than the visible one, seen only through acme/ops: more than a window.
const hidden = Array.from({ length: 20 }, (_, i) =>
  entity({
    id: `e-hidden-${String(i).padStart(2, '0')}`,
    name: `Hidden ${i}`,
    embedding: { modelId: M, vector: toward(0.99 - i * 0.001) },
  }),
);

beforeAll(async () => {
  await c.project({
    entities: [
      entity({
        id: 'e-planet',
        name: 'Mercury',
        type: 'planet',
        embedding: { modelId: M, vector: toward(0.6) },
      }),
      entity({ id: 'e-project', name: 'Mercury', type: 'project', externalIds: ['jira:MER'] }),
      entity({ id: 'e-kestrel', name: 'Kestrel Pipeline', aliases: ['kestrel'] }),
      ...hidden,
    ],
  });
  const about = (id: string, namespace: string, about: string[]) =>
    recordState({
      tenant,
      id,
      namespace,
      subject: id,
      text: id,
      about,
      embedding: { modelId: M, vector: unitVector(5, dims) },
    });
  await c.project({
    records: [
      about('r-eng', 'acme/eng', ['e-planet', 'e-project', 'e-kestrel']),
      about(
        'r-ops',
        'acme/ops',
        hidden.map((h) => h.id),
      ),
    ],
  });
});

afterAll(() => c.cleanup());

describe('entity facts through the index held in process', () => {
  it('matches a name in any case, of a compatible type, and an alias, an external id or an id', async () => {
    const [planet, project, untyped, alias, ext, byId, none] = await graph.lookups.entityFacts(full, [
      probe({ alias: 'MERCURY', type: 'planet' }),
      probe({ alias: 'mercury', type: 'project' }),
      probe({ alias: 'Mercury' }),
      probe({ alias: 'Kestrel' }),
      probe({ externalId: 'jira:MER' }),
      probe({ id: 'e-kestrel' }),
      probe({ alias: 'mercury', type: 'moon' }),
    ]);
    expect(planet!.exact?.id).toBe('e-planet');
    expect(project!.exact?.id).toBe('e-project');
    expect(untyped!.exact?.id).toBe('e-planet'); // the first by id of the two
    expect(alias!.exact?.id).toBe('e-kestrel');
    expect(ext!.exact?.id).toBe('e-project');
    expect(byId!.exact?.id).toBe('e-kestrel');
    expect(none!.exact).toBeNull();
  });

  it('finds the nearest entity by exact cosine among all of the tenant', async () => {
    const [f] = await graph.lookups.entityFacts(full, [probe({ alias: 'nobody', vector: toward(1) })]);
    expect(f!.nearest?.id).toBe('e-hidden-00');
    expect(f!.nearest!.cosine).toBeCloseTo(0.99, 5);
  });

  it('finds the nearest visible entity past a window of nearer ones the caller cannot see', async () => {
    const [f] = await graph.lookups.entityFacts(eng, [probe({ alias: 'nobody', vector: toward(1) })]);
    expect(f!.nearest?.id).toBe('e-planet');
    expect(f!.nearest!.cosine).toBeCloseTo(0.6, 5);
    const [hiddenByName] = await graph.lookups.entityFacts(eng, [probe({ alias: 'hidden 3' })]);
    expect(hiddenByName!.exact).toBeNull();
  });

  it('says whether the default id is taken and by a visible entity', async () => {
    const [taken, hiddenTaken, free] = await graph.lookups.entityFacts(eng, [
      probe({ alias: 'x', defaultId: 'e-kestrel' }),
      probe({ alias: 'x', defaultId: 'e-hidden-01' }),
      probe({ alias: 'x', defaultId: 'e-free' }),
    ]);
    expect([taken!.defaultIdTaken, taken!.defaultIdVisible]).toEqual([true, true]);
    expect([hiddenTaken!.defaultIdTaken, hiddenTaken!.defaultIdVisible]).toEqual([true, false]);
    expect([free!.defaultIdTaken, free!.defaultIdVisible]).toEqual([false, false]);
  });

  it('finds an entity written after the index was loaded, and anchors recall on it', async () => {
    await c.project({
      entities: [
        entity({
          id: 'e-osprey',
          name: 'Osprey',
          aliases: ['osprey api'],
          embedding: { modelId: M, vector: toward(1) },
        }),
      ],
    });
    // Recall first: its index is the one the earlier lookups loaded, now behind the graph.
    expect(await graph.arms.entitiesNamed(full, ['osprey', 'kestrel'], 8)).toEqual(['e-kestrel', 'e-osprey']);
    const [f] = await graph.lookups.entityFacts(full, [probe({ alias: 'osprey api', vector: toward(1) })]);
    expect(f!.exact?.id).toBe('e-osprey');
    expect(f!.nearest?.id).toBe('e-osprey');
  });

  it('no longer matches an erased entity by its old name, alias or vector', async () => {
    await c.project({ entities: [entity({ id: 'e-osprey', name: ERASED_MARK })] });
    expect(await graph.arms.entitiesNamed(full, ['osprey'], 8)).toEqual([]);
    const [f] = await graph.lookups.entityFacts(full, [probe({ alias: 'osprey api', vector: toward(1) })]);
    expect(f!.exact).toBeNull();
    expect(f!.nearest?.id).toBe('e-hidden-00');
  });

  it('a tenant past MUNINN_ENTITIES_HELD is read whole by each lookup, never kept, and answered the same', async () => {
    const bounded = new Neo4jGraphStore(c.db, { entitiesHeld: 5 });
    const loads: unknown[] = [];
    c.db.observer = (r) => void (r.op === 'entity.load' && loads.push(r.params['since']));
    try {
      for (let i = 0; i < 2; i++) {
        const [f] = await bounded.lookups.entityFacts(full, [probe({ alias: 'kestrel' })]);
        expect(f!.exact?.id).toBe('e-kestrel');
      }
    } finally {
      c.db.observer = undefined;
    }
    expect(loads).toEqual([-1, -1]);
  });

  it('anchors only on entities the caller can see', async () => {
    expect(await graph.arms.entitiesNamed(eng, ['mercury', 'hidden 1'], 8)).toEqual([
      'e-planet',
      'e-project',
    ]);
    expect(await graph.arms.entitiesNamed(full, ['hidden 1'], 8)).toEqual(['e-hidden-01']);
  });
});
