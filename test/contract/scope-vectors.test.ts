import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Neo4jGraphStore } from '../../src/adapters/neo4j/graph-store.ts';
import type { RecordState } from '../../src/domain/fold.ts';
import type { Sensitivity } from '../../src/domain/model.ts';
import type { ArmQuery, ReadScope } from '../../src/ports/graph.ts';
import { contractGraph } from '../support/contract-graph.ts';
import { recordState } from '../support/record-state.ts';

/**
 * The vector arm's vectors held in process (src/adapters/neo4j/scope-vectors.ts), against a real Neo4j and
 * beside the Cypher scan it stands in for (a second store holding no vectors): the same ids in the same
 * order for every caller; what the projection writes after a shard was loaded is seen by the next recall;
 * a record written without its embedding leaves the ranking; a rebuilt graph (a new epoch) is reloaded.
 */

const c = await contractGraph('scope-vectors');
/** The same graph with no vectors held: the Cypher scan the held vectors stand in for. */
const plain = await contractGraph('scope-vectors-scan', { vectorsHeld: 0 });
const { db, tenant, graph: held } = c;
const scan: Neo4jGraphStore = plain.graph;
const t0 = '2026-01-01T00:00:00.000Z';
const MODEL = 'test-model';
const dims = 8;

/** A unit vector at angle `a` (radians) from the query's axis, in the plane of the first two axes. */
const at = (a: number) =>
  Array.from({ length: dims }, (_, j) => (j === 0 ? Math.cos(a) : j === 1 ? Math.sin(a) : 0));
const query = at(0);

const rec = (
  id: string,
  angle: number,
  o: { namespace?: string; sensitivity?: Sensitivity } = {},
): RecordState =>
  recordState({
    tenant,
    id,
    namespace: o.namespace ?? 'acme/eng',
    subject: id,
    text: `note ${id}`,
    sensitivity: o.sensitivity ?? 'PUBLIC',
    embedding: { modelId: MODEL, vector: at(angle) },
  });

const project = (records: RecordState[]) => c.project({ records });

const everyone: ReadScope = { tenant, grants: [{ root: null, maxSensitivity: 'RESTRICTED' }] };
const publicOnly: ReadScope = { tenant, grants: [{ root: null, maxSensitivity: 'PUBLIC' }] };
const arm = (scope: ReadScope, namespace = 'acme', k = 10): ArmQuery => ({
  scope,
  namespace,
  classes: null,
  validAt: t0,
  knownAt: null,
  k,
});

beforeAll(async () => {
  // 80 restricted records nearer the query than 20 public ones: a public caller's first window of the
  // ranking (2k = 20 ids) holds none it may see, and the next (160) the rest.
  await project([
    ...Array.from({ length: 80 }, (_, i) =>
      rec(`s${String(i).padStart(2, '0')}`, 0.001 * (i + 1), {
        namespace: 'acme/ops',
        sensitivity: 'RESTRICTED',
      }),
    ),
    ...Array.from({ length: 20 }, (_, i) => rec(`p${String(i).padStart(2, '0')}`, 0.2 + 0.01 * i)),
  ]);
});

afterAll(async () => {
  await c.cleanup();
  await plain.cleanup();
});

type Candidate = { readonly id: string; readonly cosine: number | null };

/**
 * The same ids in the same order, each with the scan's cosine within 1e-6: the held lookup gives the
 * cosine its 32-bit ranking computed, Neo4j its own 32-bit one (they differ in the last bits).
 */
function expectSameCandidates(held: readonly Candidate[], scanned: readonly Candidate[]): void {
  expect(held.map((x) => x.id)).toEqual(scanned.map((x) => x.id));
  held.forEach((x, i) => {
    const y = scanned[i]!.cosine;
    if (y === null) expect(x.cosine).toBeNull();
    else expect(Math.abs(x.cosine! - y)).toBeLessThan(1e-6);
  });
}

describe('the vector arm ranks from vectors held in process as the Cypher scan does', () => {
  it('the same ids in the same order for every caller and namespace, invisible records never in the way', async () => {
    for (const q of [
      arm(everyone),
      arm(publicOnly),
      arm(everyone, 'acme/eng'),
      arm(publicOnly, 'acme/ops'),
    ]) {
      expect(await held.arms.vectorArm(q, query, MODEL)).toEqual(await scan.arms.vectorArm(q, query, MODEL));
    }
    expect(await held.arms.vectorArm(arm(publicOnly), query, MODEL)).toEqual(
      Array.from({ length: 10 }, (_, i) => `p${String(i).padStart(2, '0')}`),
    );
    expect(await held.arms.vectorArm(arm(publicOnly, 'acme/ops'), query, MODEL)).toEqual([]);
  });

  it("ingest's relate lookup finds the same candidates with the same cosines (to 1e-6) as the Cypher scan", async () => {
    const relate = (g: Neo4jGraphStore, scope: ReadScope) =>
      g.lookups.relateCandidatesMany(
        scope,
        'acme',
        [{ subject: 'nobody', vector: query, modelId: MODEL }],
        5,
      );
    for (const scope of [everyone, publicOnly]) {
      const [a] = await relate(held, scope);
      const [b] = await relate(scan, scope);
      expectSameCandidates(a!, b!);
      expect(a).toHaveLength(5);
    }
    const [pub] = await relate(held, publicOnly);
    expect(pub!.map((c) => c.id)).toEqual(['p00', 'p01', 'p02', 'p03', 'p04']);
  });

  it('relate lookups under several scopes asked together (one statement) each find what the Cypher scan finds alone', async () => {
    const asks: Array<[ReadScope, string]> = [
      [everyone, 'acme'],
      [publicOnly, 'acme'],
      [publicOnly, 'acme/ops'],
      [everyone, 'acme/ops'],
      [publicOnly, 'acme/eng'],
    ];
    const relate = (g: Neo4jGraphStore, [scope, ns]: [ReadScope, string]) =>
      g.lookups.relateCandidatesMany(scope, ns, [{ subject: 'p03', vector: query, modelId: MODEL }], 5);
    const together = await Promise.all(asks.map((a) => relate(held, a)));
    for (const [i, a] of asks.entries()) {
      const [alone] = await relate(scan, a);
      const byId = (xs: readonly Candidate[]) => [...xs].sort((p, q) => p.id.localeCompare(q.id));
      expectSameCandidates(byId(together[i]![0]!), byId(alone!));
    }
    expect(together[2]![0]).toEqual([]); // no public record under acme/ops
    expect(together[3]![0]!.map((x) => x.id)).toEqual(['s00', 's01', 's02', 's03', 's04']);
  });

  it('subject matches answered in the same statement as the held ranking keep the cosine their vector match found', async () => {
    // p02 is among the 5 nearest and matches by subject; p07 matches by subject only (no cosine).
    const queries = ['p02', 'p07', 'nobody'].map((subject) => ({ subject, vector: query, modelId: MODEL }));
    const both = (g: Neo4jGraphStore) => g.lookups.relateCandidatesMany(publicOnly, 'acme', queries, 5);
    const [a, b] = [await both(held), await both(scan)];
    const sorted = (xs: readonly Candidate[]) => [...xs].sort((p, q) => p.id.localeCompare(q.id));
    for (const i of [0, 1, 2]) expectSameCandidates(sorted(a[i]!), sorted(b[i]!));
    expect(a[0]!.find((x) => x.id === 'p02')?.cosine).toBeGreaterThan(0.9);
    expect(a[1]!.find((x) => x.id === 'p07')?.cosine).toBeNull();
    expect(a[1]!.map((x) => x.id).sort()).toEqual(['p00', 'p01', 'p02', 'p03', 'p04', 'p07']);
  });

  it('a record projected after the shard was loaded is ranked by the next recall', async () => {
    await held.arms.vectorArm(arm(publicOnly, 'acme/eng', 3), query, MODEL);
    await project([rec('p-new', 0.1)]);
    expect(await held.arms.vectorArm(arm(publicOnly, 'acme/eng', 3), query, MODEL)).toEqual([
      'p-new',
      'p00',
      'p01',
    ]);
  });

  it('a record written again without its embedding (an erasure) leaves the ranking', async () => {
    await project([{ ...rec('p-new', 0.1), embedding: null }]);
    const q = arm(publicOnly, 'acme/eng', 3);
    expect(await held.arms.vectorArm(q, query, MODEL)).toEqual(['p00', 'p01', 'p02']);
    expect(await held.arms.vectorArm(q, query, MODEL)).toEqual(await scan.arms.vectorArm(q, query, MODEL));
  });

  it('after the shard was loaded, a record revised with new text ranks by its new vector; one written again at its version keeps its place', async () => {
    const q = () => arm(publicOnly, 'acme/eng', 3); // one ArmQuery per recall: its stamps are read once
    expect(await held.arms.vectorArm(q(), query, MODEL)).toEqual(['p00', 'p01', 'p02']);
    const t1 = '2026-02-01T00:00:00.000Z';
    const p05 = rec('p05', 0.2 + 0.01 * 5);
    const v1 = p05.revisions[0]!;
    await project([
      {
        ...p05,
        revisions: [
          { ...v1, retiredAt: t1 },
          { ...v1, version: 2, recordedAt: t1, eventId: 'ev-p05-2' },
        ],
        embedding: { modelId: MODEL, vector: at(0.05) },
      },
      { ...rec('p00', 0.2), reinforcements: 1 },
    ]);
    expect(await held.arms.vectorArm(q(), query, MODEL)).toEqual(['p05', 'p00', 'p01']);
    expect(await held.arms.vectorArm(q(), query, MODEL)).toEqual(
      await scan.arms.vectorArm(q(), query, MODEL),
    );
  });

  it('a graph wiped and projected again (a new epoch) is loaded afresh, not merged with what was held', async () => {
    await db.write('contract.wipe', 'MATCH (n {tenant: $t}) DETACH DELETE n', { t: tenant });
    await project([rec('w1', 0.5), rec('w2', 0.4)]);
    expect(await held.arms.vectorArm(arm(everyone), query, MODEL)).toEqual(['w2', 'w1']);
  });
});
