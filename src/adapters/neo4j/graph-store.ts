import type { GraphAdmin, GraphStore, ProjectionStore, RecallArms, RecordReads } from '../../ports/graph.ts';
import type { IngestLookups, SubjectTurns } from '../../ports/ingest-lookups.ts';
import { Neo4jGraphAdmin } from './admin.ts';
import type { CypherExecutor } from './executor.ts';
import { HeldEntities } from './entity-held.ts';
import { Neo4jIngestLookups } from './ingest-lookups.ts';
import { Neo4jProjectionStore } from './projection-store.ts';
import { Neo4jRecallArms } from './recall-arms.ts';
import { Neo4jRecordReads } from './record-reads.ts';
import { ScopeVectors } from './scope-vectors.ts';
import { Neo4jSubjectTurns } from './subject-turns.ts';

/**
 * The graph port by role over one executor: each role object implements exactly its interface, and the
 * composition root hands a use case the role it needs (`graph.reads`, `graph.arms`, …). The flat methods
 * below only delegate, for what still takes the whole GraphStore (the CLI, lifecycle wiring, tests).
 */
export class Neo4jGraphStore implements GraphStore {
  readonly projector: ProjectionStore;
  readonly reads: RecordReads;
  readonly arms: RecallArms;
  readonly lookups: IngestLookups;
  readonly admin: GraphAdmin;
  readonly turns: SubjectTurns;

  /**
   * `vectorsHeld`: the most record vectors recall and relate keep in process (MUNINN_RECALL_VECTORS_HELD);
   * `entitiesHeld`: the most entities entity resolution and recall's anchors keep (MUNINN_ENTITIES_HELD).
   */
  constructor(
    readonly db: CypherExecutor,
    opts: { vectorsHeld?: number; entitiesHeld?: number } = {},
  ) {
    // One set of vectors held in process for the process's recall and relate (scope-vectors.ts).
    const memory = new ScopeVectors(db, opts.vectorsHeld ?? ScopeVectors.DEFAULT_HELD);
    this.projector = new Neo4jProjectionStore(db);
    this.reads = new Neo4jRecordReads(db);
    // One entity index held in process for the process's entity lookups and recall's anchors (entity-held.ts).
    const entities = new HeldEntities(db, opts.entitiesHeld ?? HeldEntities.DEFAULT_HELD);
    this.arms = new Neo4jRecallArms(db, memory, { entities });
    this.lookups = new Neo4jIngestLookups(db, memory, entities);
    this.admin = new Neo4jGraphAdmin(db);
    this.turns = new Neo4jSubjectTurns(db);
  }

  // ProjectionStore (and Checkpoints)
  projection: GraphStore['projection'] = (fn) => this.projector.projection(fn);
  checkpoints: GraphStore['checkpoints'] = (topic) => this.projector.checkpoints(topic);
  checkpointsApplied: GraphStore['checkpointsApplied'] = (topic) => this.projector.checkpointsApplied(topic);

  // RecordReads
  record: GraphStore['record'] = (scope, id, asOf) => this.reads.record(scope, id, asOf);
  records: GraphStore['records'] = (scope, q, asOf, first, after) =>
    this.reads.records(scope, q, asOf, first, after);
  history: GraphStore['history'] = (scope, id) => this.reads.history(scope, id);
  recordCount: GraphStore['recordCount'] = (scope, q, asOf) => this.reads.recordCount(scope, q, asOf);
  entities: GraphStore['entities'] = (scope, ids) => this.reads.entities(scope, ids);
  findEntity: GraphStore['findEntity'] = (scope, ref) => this.reads.findEntity(scope, ref);
  relations: GraphStore['relations'] = (scope, id) => this.reads.relations(scope, id);
  reviewQueue: GraphStore['reviewQueue'] = (scope, ns, first, after) =>
    this.reads.reviewQueue(scope, ns, first, after);
  recordsByIds: GraphStore['recordsByIds'] = (scope, ids, knownAt) =>
    this.reads.recordsByIds(scope, ids, knownAt);
  grants: GraphStore['grants'] = (tenant) => this.reads.grants(tenant);

  // RecallArms
  lexicalArm: GraphStore['lexicalArm'] = (q, text, fetch) => this.arms.lexicalArm(q, text, fetch);
  vectorArm: GraphStore['vectorArm'] = (q, vector, modelId) => this.arms.vectorArm(q, vector, modelId);
  graphArm: GraphStore['graphArm'] = (q, anchors) => this.arms.graphArm(q, anchors);
  relatedArm: GraphStore['relatedArm'] = (q, seeds) => this.arms.relatedArm(q, seeds);
  entitiesNamed: GraphStore['entitiesNamed'] = (scope, phrases, limit) =>
    this.arms.entitiesNamed(scope, phrases, limit);
  scopeArm: GraphStore['scopeArm'] = (q) => this.arms.scopeArm(q);

  // IngestLookups
  standingHolds: GraphStore['standingHolds'] = (tenant) => this.lookups.standingHolds(tenant);
  finding: GraphStore['finding'] = (scope, id) => this.lookups.finding(scope, id);
  rollbackScope: GraphStore['rollbackScope'] = (tenant, target) => this.lookups.rollbackScope(tenant, target);
  derivations: GraphStore['derivations'] = (tenant, seeds, depth) =>
    this.lookups.derivations(tenant, seeds, depth);
  receipt: GraphStore['receipt'] = (tenant, key) => this.lookups.receipt(tenant, key);
  receiptsByPrefix: GraphStore['receiptsByPrefix'] = (tenant, key) =>
    this.lookups.receiptsByPrefix(tenant, key);
  relateCandidatesMany: GraphStore['relateCandidatesMany'] = (scope, ns, queries, k) =>
    this.lookups.relateCandidatesMany(scope, ns, queries, k);
  entityFacts: GraphStore['entityFacts'] = (scope, probes) => this.lookups.entityFacts(scope, probes);
  grant: GraphStore['grant'] = (tenant, id) => this.lookups.grant(tenant, id);
  grantsFor: GraphStore['grantsFor'] = (tenant, grantees) => this.lookups.grantsFor(tenant, grantees);

  // GraphAdmin
  migrate: GraphStore['migrate'] = () => this.admin.migrate();
  migrationsApplied: GraphStore['migrationsApplied'] = () => this.admin.migrationsApplied();
  ping: GraphStore['ping'] = () => this.admin.ping();
  isTestDatabase: GraphStore['isTestDatabase'] = () => this.admin.isTestDatabase();
  markTestDatabase: GraphStore['markTestDatabase'] = (marked) => this.admin.markTestDatabase(marked);
  embeddingModels: GraphStore['embeddingModels'] = (tenant) => this.admin.embeddingModels(tenant);
  stateHash: GraphStore['stateHash'] = () => this.admin.stateHash();
  stateLines: GraphStore['stateLines'] = () => this.admin.stateLines();
  wipe: GraphStore['wipe'] = () => this.admin.wipe();
  fenceProjection: GraphStore['fenceProjection'] = (topic, partitions) =>
    this.admin.fenceProjection(topic, partitions);
  liftProjectionFence: GraphStore['liftProjectionFence'] = (topic, fence) =>
    this.admin.liftProjectionFence(topic, fence);
  close: GraphStore['close'] = () => this.admin.close();
}
