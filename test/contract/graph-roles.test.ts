import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CypherExecutor } from '../../src/adapters/neo4j/executor.ts';
import { Neo4jGraphStore } from '../../src/adapters/neo4j/graph-store.ts';
import type { EntityState, GrantState, Receipt, RecordState } from '../../src/domain/fold.ts';
import type { Sensitivity } from '../../src/domain/model.ts';
import type { ArmQuery, ReadScope } from '../../src/ports/graph.ts';
import { testConfig } from '../support/harness.ts';
import { recordState, unitVector } from '../support/record-state.ts';

/**
 * The contract tier: the graph port's roles, each through its own role object, against a real Neo4j (no
 * mocks). The projection writes state; the reads, arms and lookups read it back under a scope, and see
 * nothing of another tenant, above the caller's clearance or outside its namespaces.
 */
let db: CypherExecutor;
let graph: Neo4jGraphStore;
const tenant = `contract-${randomUUID()}`;
const otherTenant = `contract-other-${randomUUID()}`;
const topic = `contract-${randomUUID()}`;
const t0 = '2026-01-01T00:00:00.000Z';
const now = '2026-06-01T00:00:00.000Z';
const dims = 384;
const unit = (i: number) => unitVector(i, dims);

const record = (o: {
  tenant?: string;
  id: string;
  namespace: string;
  sensitivity: Sensitivity;
  text: string;
}): RecordState =>
  recordState({
    ...o,
    tenant: o.tenant ?? tenant,
    subject: 'Kestrel',
    about: ['e-kestrel'],
    embedding: { modelId: 'test', vector: unit(0) },
  });

const entity = (t: string): EntityState => ({
  tenant: t,
  id: 'e-kestrel',
  name: 'Kestrel',
  type: 'project',
  aliases: ['kestrel'],
  externalIds: [],
  sameAs: null,
  embedding: { modelId: 'test', vector: unit(0) },
});

const receipt = (key: string, recordId: string): Receipt => ({
  tenant,
  idempotencyKey: key,
  commandHash: 'h',
  eventId: `ev-${key}`,
  outcome: 'ADMITTED',
  recordId,
  version: 1,
  reason: null,
  recordedAt: t0,
});

// The same grantee holds a grant in each tenant.
const grant = (t: string, namespace: string): GrantState => ({
  tenant: t,
  id: `g-${namespace}`,
  grantee: 'iss|ada',
  namespace,
  maxSensitivity: 'INTERNAL',
  purposes: null,
  grantedBy: 'iss|root',
  grantedAt: t0,
  revokedAt: null,
  revokeReason: null,
});

// The tenant's records: the visible one (acme/eng, PUBLIC), one above a PUBLIC clearance, one in another
// namespace; the other tenant holds a record with the same id and text.
const records = [
  record({ id: 'r-eng', namespace: 'acme/eng', sensitivity: 'PUBLIC', text: 'kestrel deploys on fridays' }),
  record({ id: 'r-secret', namespace: 'acme/eng', sensitivity: 'CONFIDENTIAL', text: 'kestrel deploy key' }),
  record({ id: 'r-ops', namespace: 'acme/ops', sensitivity: 'PUBLIC', text: 'kestrel deploys at night' }),
  record({ tenant: otherTenant, id: 'r-eng', namespace: 'acme/eng', sensitivity: 'PUBLIC', text: 'kestrel' }),
];

const scope = (root: string | null, maxSensitivity: Sensitivity, t = tenant): ReadScope => ({
  tenant: t,
  grants: [{ root, maxSensitivity }],
});
const everything = scope(null, 'RESTRICTED');
const engPublic = scope('acme/eng', 'PUBLIC');
const arm = (s: ReadScope): ArmQuery => ({
  scope: s,
  namespace: 'acme',
  classes: null,
  validAt: now,
  knownAt: null,
  k: 10,
});

beforeAll(async () => {
  const c = testConfig().neo4j;
  db = CypherExecutor.connect(c.uri, c.user, c.password, c.database);
  graph = new Neo4jGraphStore(db);
  await graph.admin.migrate();
  await graph.projector.projection(async (tx) => {
    await tx.lockCheckpoint(topic, 0);
    await tx.write({
      records,
      entities: [entity(tenant), entity(otherTenant)],
      receipts: [receipt('k1', 'r-eng'), receipt('k1#relate', 'r-ops'), receipt('k10', 'r-secret')],
      episodes: [],
      grants: [grant(tenant, 'acme/eng'), grant(otherTenant, 'acme/ops')],
    });
    await tx.setCheckpoint(topic, 0, 41n);
  });
});

afterAll(async () => {
  for (const t of [tenant, otherTenant])
    await db?.write('contract.cleanup', 'MATCH (n {tenant: $t}) DETACH DELETE n', { t });
  await db?.write('contract.cleanup', 'MATCH (c:Checkpoint {topic: $topic}) DELETE c', { topic });
  await db?.close();
});

describe('ProjectionStore then RecordReads', () => {
  it('reads back what the projection wrote, and the checkpoint it moved', async () => {
    const r = await graph.reads.record(everything, 'r-eng');
    expect(r).toMatchObject({
      tenant,
      id: 'r-eng',
      namespace: 'acme/eng',
      status: 'ACTIVE',
      version: 1,
      text: 'kestrel deploys on fridays',
      about: ['e-kestrel'],
    });
    expect((await graph.reads.history(everything, 'r-eng')).map((v) => v.version)).toEqual([1]);
    const page = await graph.reads.records(everything, { namespace: 'acme' }, {}, 10, null);
    expect(page.items.map((i) => i.id)).toEqual(['r-eng', 'r-ops', 'r-secret']);
    expect(await graph.projector.checkpoints(topic)).toEqual([{ topic, partition: 0, offset: '41' }]);
  });
});

describe('a scope sees nothing outside itself', () => {
  it('another tenant reads none of this tenant, only its own', async () => {
    const other = scope(null, 'RESTRICTED', otherTenant);
    expect((await graph.reads.record(other, 'r-eng'))?.text).toBe('kestrel');
    expect(await graph.reads.record(other, 'r-secret')).toBeUndefined();
    expect(
      await graph.reads.record(scope(null, 'RESTRICTED', `nobody-${randomUUID()}`), 'r-eng'),
    ).toBeUndefined();
  });

  it('a lower clearance does not see the record above it', async () => {
    expect(await graph.reads.record(engPublic, 'r-secret')).toBeUndefined();
    expect(await graph.reads.history(engPublic, 'r-secret')).toEqual([]);
    const page = await graph.reads.records(engPublic, { namespace: 'acme' }, {}, 10, null);
    expect(page.items.map((i) => i.id)).toEqual(['r-eng']);
    expect(await graph.reads.recordCount(engPublic, { namespace: 'acme' }, {})).toBe(1);
  });

  it('another namespace sees neither the records nor the entity they are about', async () => {
    const design = scope('acme/design', 'RESTRICTED');
    expect(await graph.reads.record(design, 'r-eng')).toBeUndefined();
    expect(await graph.reads.recordsByIds(design, ['r-eng', 'r-ops', 'r-secret'])).toEqual([]);
    expect(await graph.reads.entities(design, ['e-kestrel'])).toEqual([]);
    expect(await graph.reads.findEntity(design, { alias: 'kestrel' })).toBeUndefined();
    expect((await graph.reads.entities(engPublic, ['e-kestrel'])).map((e) => e.id)).toEqual(['e-kestrel']);
  });
});

describe('RecallArms return only visible ids', () => {
  it('every arm, under acme/eng at PUBLIC, finds only r-eng', async () => {
    const q = arm(engPublic);
    expect((await graph.arms.lexicalArm(q, 'kestrel deploys', 50)).map((c) => c.id)).toEqual(['r-eng']);
    expect(await graph.arms.vectorArm(q, unit(0), 'test')).toEqual(['r-eng']);
    expect(await graph.arms.graphArm(q, ['e-kestrel'])).toEqual([['r-eng', 'e-kestrel']]);
    expect(await graph.arms.entitiesNamed(engPublic, ['kestrel'], 5)).toEqual(['e-kestrel']);
  });

  it('the whole tenant at every label finds all three, never the other tenant', async () => {
    const ids = (await graph.arms.lexicalArm(arm(everything), 'kestrel', 50)).map((c) => c.id).sort();
    expect(ids).toEqual(['r-eng', 'r-ops', 'r-secret']);
    expect((await graph.arms.vectorArm(arm(everything), unit(0), 'test')).sort()).toEqual(ids);
  });

  it('a scope with no readable record finds nothing, not even the entity', async () => {
    const q = arm(scope('acme/design', 'RESTRICTED'));
    expect(await graph.arms.lexicalArm(q, 'kestrel', 50)).toEqual([]);
    expect(await graph.arms.vectorArm(q, unit(0), 'test')).toEqual([]);
    expect(await graph.arms.graphArm(q, ['e-kestrel'])).toEqual([]);
    expect(await graph.arms.entitiesNamed(q.scope, ['kestrel'], 5)).toEqual([]);
  });
});

describe('IngestLookups', () => {
  it('receipt finds one key; receiptsByPrefix a command and what it produced, not a longer key', async () => {
    expect((await graph.lookups.receipt(tenant, 'k1'))?.recordId).toBe('r-eng');
    expect(await graph.lookups.receipt(otherTenant, 'k1')).toBeUndefined();
    const byPrefix = await graph.lookups.receiptsByPrefix(tenant, 'k1');
    expect(byPrefix.map((r) => r.idempotencyKey)).toEqual(['k1', 'k1#relate']);
  });

  it('receipts and grants asked for together: one statement each, every caller answered for its own tenant', async () => {
    const ops: string[] = [];
    db.observer = (r) => ops.push(r.op);
    try {
      const [mine, theirs, none, gMine, gTheirs, gNobody] = await Promise.all([
        graph.lookups.receipt(tenant, 'k1'),
        graph.lookups.receipt(otherTenant, 'k1'),
        graph.lookups.receipt(tenant, 'k-none'),
        graph.lookups.grantsFor(tenant, ['iss|ada']),
        graph.lookups.grantsFor(otherTenant, ['iss|ada', 'iss|bob']),
        graph.lookups.grantsFor(tenant, ['iss|nobody']),
      ]);
      expect(mine?.recordId).toBe('r-eng');
      expect(theirs).toBeUndefined();
      expect(none).toBeUndefined();
      expect(gMine.map((g) => [g.tenant, g.namespace])).toEqual([[tenant, 'acme/eng']]);
      expect(gTheirs.map((g) => [g.tenant, g.namespace])).toEqual([[otherTenant, 'acme/ops']]);
      expect(gNobody).toEqual([]);
    } finally {
      db.observer = undefined;
    }
    expect(ops.sort()).toEqual(['grants.for', 'receipt.get']);
  });
});

describe('GraphAdmin', () => {
  it('stateHash is the same across two calls over unchanged state', async () => {
    const a = await graph.admin.stateHash();
    const b = await graph.admin.stateHash();
    expect(a.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(b).toEqual(a);
    expect(a.nodes).toBeGreaterThanOrEqual(records.length + 2);
  });
});
