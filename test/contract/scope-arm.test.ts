import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CypherExecutor } from '../../src/adapters/neo4j/executor.ts';
import { Neo4jGraphStore } from '../../src/adapters/neo4j/graph-store.ts';
import type { RecordState } from '../../src/domain/fold.ts';
import type { RecordClass, Sensitivity } from '../../src/domain/model.ts';
import type { ArmQuery, ReadScope } from '../../src/ports/graph.ts';
import { testConfig } from '../support/harness.ts';
import { recordState, unitVector } from '../support/record-state.ts';

/**
 * Recall's scope arm against a real Neo4j: the norms, procedures, preferences and decisions of the
 * request's ancestor namespaces, nearest ancestor first and by confidence within one, visible ones only.
 * It reads one ancestor at a time and stops once it has k: a farther ancestor's records never displace a
 * nearer one's.
 */

let db: CypherExecutor;
let graph: Neo4jGraphStore;
const tenant = `scope-arm-${randomUUID()}`;
const topic = `scope-arm-${randomUUID()}`;
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
  const c = testConfig().neo4j;
  db = CypherExecutor.connect(c.uri, c.user, c.password, c.database);
  graph = new Neo4jGraphStore(db);
  await graph.admin.migrate();
  await graph.projector.projection(async (tx) => {
    await tx.lockCheckpoint(topic, 0);
    await tx.write({
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
      entities: [],
      receipts: [],
      episodes: [],
      grants: [],
    });
    await tx.setCheckpoint(topic, 0, 1n);
  });
});

afterAll(async () => {
  await db?.write('contract.cleanup', 'MATCH (n {tenant: $t}) DETACH DELETE n', { t: tenant });
  await db?.write('contract.cleanup', 'MATCH (c:Checkpoint {topic: $topic}) DELETE c', { topic });
  await db?.close();
});

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
});
