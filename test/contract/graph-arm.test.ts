import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Neo4jRecallArms } from '../../src/adapters/neo4j/recall-arms.ts';
import type { RecordState } from '../../src/domain/fold.ts';
import type { Sensitivity } from '../../src/domain/model.ts';
import type { ArmQuery, ReadScope } from '../../src/ports/graph.ts';
import { contractGraph } from '../support/contract-graph.ts';
import { entityState, recordState, unitVector } from '../support/record-state.ts';
import { StampSettling } from '../../src/adapters/neo4j/stamp-settling.ts';

/**
 * Recall's graph arm against a real Neo4j, both of its queries: a small request scope scans its records
 * (`recall.graphScan`), a large one starts from the anchors and runs the whole filter only on records
 * already in order (`recall.graph`). Both must return the same ids in the same order: records about an
 * anchor before those about an entity it is the same as, then by confidence, then id — and never one the
 * caller may not see, of another namespace, retracted or no longer valid, however confident.
 */

const c = await contractGraph('graph-arm');
const { graph, tenant } = c;

const rec = (
  id: string,
  about: string,
  confidence: number,
  o: { namespace?: string; sensitivity?: Sensitivity; status?: 'RETRACTED'; validTo?: string } = {},
): RecordState => {
  const base = recordState({
    tenant,
    id,
    namespace: o.namespace ?? 'acme/eng/web',
    subject: id,
    text: `note ${id}`,
    sensitivity: o.sensitivity ?? 'PUBLIC',
    about: [about],
    embedding: { modelId: 'test', vector: unitVector(0, 8) },
  });
  const [rev] = base.revisions;
  return {
    ...base,
    confidence,
    revisions: [{ ...rev!, status: o.status ?? 'ACTIVE', validTo: o.validTo ?? null }],
  };
};

const entity = (id: string, sameAs: string | null = null) => entityState(tenant, id, sameAs);

const everyone: ReadScope = { tenant, grants: [{ root: null, maxSensitivity: 'RESTRICTED' }] };
const publicOnly: ReadScope = { tenant, grants: [{ root: null, maxSensitivity: 'PUBLIC' }] };
const arm = (scope: ReadScope, namespace: string, k: number): ArmQuery => ({
  scope,
  namespace,
  classes: null,
  validAt: '2026-06-01T00:00:00.000Z',
  knownAt: null,
  k,
});

beforeAll(async () => {
  await c.project({
    entities: [entity('kestrel'), entity('kestrel-alias', 'kestrel'), entity('osprey')],
    records: [
      rec('a-high', 'kestrel', 0.9),
      rec('a-mid', 'kestrel', 0.7),
      rec('a-tie-1', 'kestrel', 0.5),
      rec('a-tie-2', 'kestrel', 0.5),
      rec('a-parent', 'kestrel', 0.4, { namespace: 'acme' }),
      rec('same-top', 'kestrel-alias', 0.99),
      rec('same-low', 'kestrel-alias', 0.3),
      // Each more confident than every visible one, and each hidden for its own reason.
      rec('x-secret', 'kestrel', 0.999, { sensitivity: 'RESTRICTED' }),
      rec('x-sibling', 'kestrel', 0.999, { namespace: 'acme/ops' }),
      rec('x-retracted', 'kestrel', 0.999, { status: 'RETRACTED' }),
      rec('x-expired', 'kestrel', 0.999, { validTo: '2026-02-01T00:00:00.000Z' }),
      rec('x-other-entity', 'osprey', 0.999),
    ],
  });
});

afterEach(() => {
  (Neo4jRecallArms as unknown as { SCAN_BELOW: number }).SCAN_BELOW = SCAN_BELOW;
});
afterAll(() => c.cleanup());
const SCAN_BELOW = Neo4jRecallArms.SCAN_BELOW;

/** The arm's answer by the scan (this small graph) and by the anchor-first query (every scope "large"). */
async function bothPaths(q: ArmQuery, anchors: string[]) {
  const scan = await graph.arms.graphArm(q, anchors);
  (Neo4jRecallArms as unknown as { SCAN_BELOW: number }).SCAN_BELOW = -1;
  const anchored = await graph.arms.graphArm(q, anchors);
  return { scan, anchored };
}

describe('the graph arm: the anchor-first query ranks and filters as the scan does', () => {
  it('anchor first, then its same-as entity; by confidence, then id; hidden records never returned', async () => {
    const { scan, anchored } = await bothPaths(arm(everyone, 'acme/eng/web', 10), ['kestrel']);
    expect(anchored).toEqual([
      ['x-secret', 'kestrel'],
      ['a-high', 'kestrel'],
      ['a-mid', 'kestrel'],
      ['a-tie-1', 'kestrel'],
      ['a-tie-2', 'kestrel'],
      ['a-parent', 'kestrel'],
      ['same-top', 'kestrel'],
      ['same-low', 'kestrel'],
    ]);
    expect(anchored).toEqual(scan);
  });

  it('a caller below RESTRICTED: the restricted record is skipped, the rest keep their order', async () => {
    const { scan, anchored } = await bothPaths(arm(publicOnly, 'acme/eng/web', 10), ['kestrel']);
    expect(anchored.map(([id]) => id)).toEqual([
      'a-high',
      'a-mid',
      'a-tie-1',
      'a-tie-2',
      'a-parent',
      'same-top',
      'same-low',
    ]);
    expect(anchored).toEqual(scan);
  });

  it('k stops the walk after k visible records, invisible ones before them not counted', async () => {
    const { scan, anchored } = await bothPaths(arm(publicOnly, 'acme/eng/web', 3), ['kestrel']);
    expect(anchored.map(([id]) => id)).toEqual(['a-high', 'a-mid', 'a-tie-1']);
    expect(anchored).toEqual(scan);
  });

  it("a request in the parent namespace sees its subtree; a sibling sees its own and the root's", async () => {
    const parent = await bothPaths(arm(publicOnly, 'acme/eng', 10), ['kestrel']);
    expect(parent.anchored).toEqual(parent.scan);
    expect(parent.anchored).toHaveLength(7);
    const sibling = await bothPaths(arm(everyone, 'acme/ops', 10), ['kestrel']);
    expect(sibling.anchored.map(([id]) => id)).toEqual(['x-sibling', 'a-parent']);
    expect(sibling.anchored).toEqual(sibling.scan);
  });

  it('two anchors: each record names the anchor it was reached from', async () => {
    const { scan, anchored } = await bothPaths(arm(everyone, 'acme', 3), ['osprey', 'kestrel']);
    expect(anchored).toEqual([
      ['x-other-entity', 'osprey'],
      ['x-secret', 'kestrel'],
      ['x-sibling', 'kestrel'],
    ]);
    expect(anchored).toEqual(scan);
  });
});

describe("the graph arm's held order (ranked-memo.ts) follows the graph", () => {
  it('a record written since, and an entity made the same as the anchor since, are in the next answer', async () => {
    // One query object per recall (ArmQuery): each call below is a new recall.
    const q = () => arm(everyone, 'acme/eng/web', 3);
    (Neo4jRecallArms as unknown as { SCAN_BELOW: number }).SCAN_BELOW = -1;
    expect((await graph.arms.graphArm(q(), ['kestrel'])).map(([id]) => id)).toEqual([
      'x-secret',
      'a-high',
      'a-mid',
    ]);
    // A new record about the anchor: its namespace's stamp moves, so the order is read again.
    await c.project({ records: [rec('b-new', 'kestrel', 0.95)] });
    expect((await graph.arms.graphArm(q(), ['kestrel'])).map(([id]) => id)).toEqual([
      'x-secret',
      'b-new',
      'a-high',
    ]);
    // A record about another entity, then (with no record written) that entity made the same as the
    // anchor: no stamp moves, and its record still joins the answer behind the anchor's own.
    await c.project({
      entities: [entity('kestrel-late')],
      records: [rec('late-top', 'kestrel-late', 0.999)],
    });
    const before = await graph.arms.graphArm(arm(everyone, 'acme/eng/web', 20), ['kestrel']);
    expect(before.map(([id]) => id)).not.toContain('late-top');
    await c.project({ entities: [entity('kestrel-late', 'kestrel')] });
    const after = await graph.arms.graphArm(arm(everyone, 'acme/eng/web', 20), ['kestrel']);
    expect(after.map(([id]) => id)).toContain('late-top');
    (Neo4jRecallArms as unknown as { SCAN_BELOW: number }).SCAN_BELOW = SCAN_BELOW;
    expect(after).toEqual(await graph.arms.graphArm(arm(everyone, 'acme/eng/web', 20), ['kestrel']));
  });

  it("an anchor's order read for one namespace serves another, and a write there is seen by it", async () => {
    (Neo4jRecallArms as unknown as { SCAN_BELOW: number }).SCAN_BELOW = -1;
    const ops = () => arm(everyone, 'acme/ops', 20);
    const loads: string[] = [];
    // The tenant's stamps seen, then settled (stamp-settling.ts): an order read from then on is held.
    await graph.arms.graphArm(ops(), ['kestrel']);
    await new Promise((r) => setTimeout(r, StampSettling.SETTLE_MS));
    c.db.observer = (r) => void (r.op === 'recall.graphOrder' && loads.push(r.op));
    try {
      expect((await graph.arms.graphArm(ops(), ['kestrel'])).map(([id]) => id)).toContain('x-sibling');
      const before = loads.length;
      await graph.arms.graphArm(arm(everyone, 'acme/eng/web', 20), ['kestrel']);
      expect(loads).toHaveLength(before); // the order acme/ops used served acme/eng/web
      // A record in acme/ops only: the order held since is stale for acme/ops, not for acme/eng/web.
      await c.project({ records: [rec('ops-new', 'kestrel', 0.9999, { namespace: 'acme/ops' })] });
      expect((await graph.arms.graphArm(ops(), ['kestrel']))[0]).toEqual(['ops-new', 'kestrel']);
      expect(loads).toHaveLength(before + 1);
    } finally {
      c.db.observer = undefined;
    }
    const web = await graph.arms.graphArm(arm(everyone, 'acme/eng/web', 20), ['kestrel']);
    expect(web.map(([id]) => id)).not.toContain('ops-new');
    (Neo4jRecallArms as unknown as { SCAN_BELOW: number }).SCAN_BELOW = SCAN_BELOW;
    expect(web).toEqual(await graph.arms.graphArm(arm(everyone, 'acme/eng/web', 20), ['kestrel']));
  });
});
