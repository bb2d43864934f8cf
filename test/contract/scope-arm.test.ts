import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Neo4jGraphStore } from '../../src/adapters/neo4j/graph-store.ts';
import type { RecordState } from '../../src/domain/fold.ts';
import type { RecordClass, Sensitivity } from '../../src/domain/model.ts';
import type { ArmQuery, ReadScope } from '../../src/ports/graph.ts';
import { contractGraph } from '../support/contract-graph.ts';
import { recordState, unitVector } from '../support/record-state.ts';

/**
 * Recall's scope arm against a real Neo4j: the norms, procedures, preferences and decisions of the
 * request's ancestor namespaces, nearest ancestor first and by confidence within one, visible ones only.
 * It reads one ancestor at a time and stops once it has k: a farther ancestor's records never displace a
 * nearer one's.
 */

const c = await contractGraph('scope-arm');
const { tenant } = c;
let graph: Neo4jGraphStore;
const t0 = '2026-01-01T00:00:00.000Z';

const rec = (
  id: string,
  namespace: string,
  confidence: number,
  o: { class?: RecordClass; sensitivity?: Sensitivity } = {},
): RecordState => ({
  ...recordState({
    tenant,
    id,
    namespace,
    subject: id,
    text: `rule ${id}`,
    sensitivity: o.sensitivity ?? 'PUBLIC',
    embedding: { modelId: 'test', vector: unitVector(0, 8) },
  }),
  class: o.class ?? 'CONSTRAINT',
  confidence,
});

const everyone: ReadScope = { tenant, grants: [{ root: null, maxSensitivity: 'RESTRICTED' }] };
const publicOnly: ReadScope = { tenant, grants: [{ root: null, maxSensitivity: 'PUBLIC' }] };
const arm = (scope: ReadScope, k: number): ArmQuery => ({
  scope,
  namespace: 'acme/eng/web',
  classes: null,
  validAt: t0,
  knownAt: null,
  k,
});

beforeAll(async () => {
  graph = c.graph;
  await c.project({
    records: [
      rec('root-a', 'acme', 0.95),
      rec('root-b', 'acme', 0.9, { class: 'DECISION' }),
      rec('root-c', 'acme', 0.8, { class: 'PREFERENCE' }),
      rec('eng-a', 'acme/eng', 0.7, { class: 'PROCEDURE' }),
      rec('eng-b', 'acme/eng', 0.6),
      rec('eng-secret', 'acme/eng', 0.99, { sensitivity: 'RESTRICTED' }),
      rec('eng-fact', 'acme/eng', 0.99, { class: 'FACT' }),
      rec('web-own', 'acme/eng/web', 0.99),
      rec('other', 'acme/ops', 0.99),
    ],
  });
});

afterAll(() => c.cleanup());

describe('the scope arm reads ancestors nearest first', () => {
  it("the parent's norms by confidence, then the grandparent's; never facts, the namespace itself or a sibling", async () => {
    expect(await graph.arms.scopeArm(arm(everyone, 10))).toEqual([
      'eng-secret',
      'eng-a',
      'eng-b',
      'root-a',
      'root-b',
      'root-c',
    ]);
  });

  it('k reached at the parent: nothing of the grandparent, however confident', async () => {
    expect(await graph.arms.scopeArm(arm(everyone, 2))).toEqual(['eng-secret', 'eng-a']);
    expect(await graph.arms.scopeArm(arm(everyone, 4))).toEqual(['eng-secret', 'eng-a', 'eng-b', 'root-a']);
  });

  it('a record the caller may not see is skipped, not counted', async () => {
    expect(await graph.arms.scopeArm(arm(publicOnly, 3))).toEqual(['eng-a', 'eng-b', 'root-a']);
  });

  it("an ancestor's order is held in process, and a record written there since is in the next answer", async () => {
    expect(await graph.arms.scopeArm(arm(everyone, 3))).toEqual(['eng-secret', 'eng-a', 'eng-b']);
    // A new rule, and a rule whose confidence changed: the parent's stamp moves, its order is read again.
    await c.project({ records: [rec('eng-new', 'acme/eng', 0.995), rec('eng-b', 'acme/eng', 0.98)] });
    expect(await graph.arms.scopeArm(arm(everyone, 3))).toEqual(['eng-new', 'eng-secret', 'eng-b']);
  });
});
