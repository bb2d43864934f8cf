import type { GrantState, Receipt } from '../../domain/fold.ts';
import type { IngestLookups } from '../../ports/graph.ts';
import { entityFacts, relateCandidatesMany } from './ingest-batch.ts';
import type { Executor } from './executor.ts';
import { toGrant, toReceipt } from './mapping.ts';
import { Neo4jRecordReads } from './record-reads.ts';
import { Neo4jRollbackLookups } from './rollback-lookups.ts';
import { Neo4jStewardReads } from './steward.ts';
import { Neo4jErasureLookups } from './erasure-lookups.ts';
import { ScopeVectors } from './scope-vectors.ts';
import { SubtreeSizes } from './subtree-size.ts';

/** What the write path looks up before it decides: receipts, entity matches, relate candidates, grants. Never writes. */
export class Neo4jIngestLookups implements IngestLookups {
  private readonly reads: Neo4jRecordReads;
  private readonly rollback: Neo4jRollbackLookups;
  private readonly steward: Neo4jStewardReads;
  private readonly erasure: Neo4jErasureLookups;
  private readonly sizes: SubtreeSizes;

  /** `memory`: the record vectors held in process, shared with recall's vector arm (graph-store.ts). */
  constructor(
    private readonly db: Executor,
    private readonly memory = new ScopeVectors(db, ScopeVectors.DEFAULT_HELD),
  ) {
    this.sizes = new SubtreeSizes(db);
    this.reads = new Neo4jRecordReads(db);
    this.rollback = new Neo4jRollbackLookups(db);
    this.steward = new Neo4jStewardReads(db);
    this.erasure = new Neo4jErasureLookups(db);
  }

  standingHolds: IngestLookups['standingHolds'] = (tenant) => this.erasure.holds(tenant, false);
  finding: IngestLookups['finding'] = (scope, id) => this.steward.finding(scope, id);
  rollbackScope: IngestLookups['rollbackScope'] = (tenant, target) =>
    this.rollback.rollbackScope(tenant, target);
  derivations: IngestLookups['derivations'] = (tenant, seeds, depth) =>
    this.rollback.derivations(tenant, seeds, depth);

  record: IngestLookups['record'] = (scope, id, asOf) => this.reads.record(scope, id, asOf);
  /** The gather step's batched lookups (ingest-batch.ts): one round trip per kind for a whole request. */
  relateCandidatesMany: IngestLookups['relateCandidatesMany'] = (scope, ns, queries, k) =>
    relateCandidatesMany({ db: this.db, sizes: this.sizes, memory: this.memory }, scope, ns, queries, k);
  entityFacts: IngestLookups['entityFacts'] = (scope, probes) => entityFacts(this.db, scope, probes);
  findEntity: IngestLookups['findEntity'] = (scope, ref) => this.reads.findEntity(scope, ref);

  async receipt(tenant: string, idempotencyKey: string): Promise<Receipt | undefined> {
    const res = await this.db.read(
      'receipt.get',
      'MATCH (r:Receipt {tenant: $tenant, idempotencyKey: $key}) RETURN r',
      {
        tenant,
        key: idempotencyKey,
      },
    );
    const r = res.records[0];
    return r ? toReceipt(r.get('r').properties) : undefined;
  }

  async receiptsByPrefix(tenant: string, key: string): Promise<Receipt[]> {
    const res = await this.db.read(
      'receipts.byPrefix',
      `MATCH (r:Receipt {tenant: $tenant}) WHERE r.idempotencyKey = $key OR r.idempotencyKey STARTS WITH $prefix
       RETURN r ORDER BY r.idempotencyKey`,
      { tenant, key, prefix: `${key}#` },
    );
    return res.records.map((r) => toReceipt(r.get('r').properties));
  }

  async grant(tenant: string, id: string): Promise<GrantState | undefined> {
    const res = await this.db.read('grant.get', 'MATCH (g:Grant {tenant: $tenant, id: $id}) RETURN g', {
      tenant,
      id,
    });
    const r = res.records[0];
    return r ? toGrant(r.get('g').properties) : undefined;
  }

  async grantsFor(tenant: string, grantees: readonly string[]): Promise<GrantState[]> {
    if (grantees.length === 0) return [];
    const res = await this.db.read(
      'grants.for',
      // Revoked grants too: an identity whose last grant was revoked has no access, not the default.
      `MATCH (g:Grant {tenant: $tenant}) WHERE g.grantee IN $grantees
       RETURN g ORDER BY g.id`,
      { tenant, grantees: [...grantees] },
    );
    return res.records.map((r) => toGrant(r.get('g').properties));
  }
}
