import type { GrantState, Receipt } from '../../domain/fold.ts';
import type { IngestLookups } from '../../ports/ingest-lookups.ts';
import { entityFacts } from './entity-facts.ts';
import { HeldEntities } from './entity-held.ts';
import { relateTogether, type RelateAnswer, type RelateCall } from './ingest-batch.ts';
import type { Executor } from './executor.ts';
import { toGrant, toReceipt } from './mapping.ts';
import { Neo4jRecordReads } from './record-reads.ts';
import { Neo4jRollbackLookups } from './rollback-lookups.ts';
import { Neo4jStewardReads } from './steward.ts';
import { Neo4jErasureLookups } from './erasure-lookups.ts';
import { Coalesced } from './coalesce.ts';
import { ScopeVectors } from './scope-vectors.ts';
import { SubtreeSizes } from './subtree-size.ts';

/** What the write path looks up before it decides: receipts, entity matches, relate candidates, grants. Never writes. */
export class Neo4jIngestLookups implements IngestLookups {
  private readonly reads: Neo4jRecordReads;
  private readonly rollback: Neo4jRollbackLookups;
  private readonly steward: Neo4jStewardReads;
  private readonly erasure: Neo4jErasureLookups;
  private readonly sizes: SubtreeSizes;
  /** Receipts and grants asked for together are read together (coalesce.ts): every write reads both. */
  private readonly receipts: Coalesced<ReceiptKey, Receipt | undefined>;
  private readonly grants: Coalesced<GranteesKey, GrantState[]>;
  /** Relate lookups of one turn under the same scope go as one (ingest-batch.ts, relateTogether). */
  private readonly relate: Coalesced<RelateCall, RelateAnswer>;

  /**
   * `memory`: the record vectors held in process, shared with recall's vector arm; `entities`: the entity
   * index held in process, shared with recall's anchors (graph-store.ts).
   */
  constructor(
    private readonly db: Executor,
    private readonly memory = new ScopeVectors(db, ScopeVectors.DEFAULT_HELD),
    private readonly entities = new HeldEntities(db),
  ) {
    this.sizes = new SubtreeSizes(db);
    this.reads = new Neo4jRecordReads(db);
    this.rollback = new Neo4jRollbackLookups(db);
    this.steward = new Neo4jStewardReads(db);
    this.erasure = new Neo4jErasureLookups(db);
    this.receipts = new Coalesced(
      (keys) => receiptsByKey(db, keys),
      (k) => `${k.tenant}\u0000${k.key}`,
    );
    this.relate = new Coalesced((calls) =>
      relateTogether({ db: this.db, sizes: this.sizes, memory: this.memory }, calls),
    );
    this.grants = new Coalesced(
      (keys) => grantsByGrantees(db, keys),
      (k) => JSON.stringify([k.tenant, ...k.grantees]),
    );
  }

  standingHolds: IngestLookups['standingHolds'] = (tenant) => this.erasure.holds(tenant, false);
  finding: IngestLookups['finding'] = (scope, id) => this.steward.finding(scope, id);
  rollbackScope: IngestLookups['rollbackScope'] = (tenant, target) =>
    this.rollback.rollbackScope(tenant, target);
  derivations: IngestLookups['derivations'] = (tenant, seeds, depth) =>
    this.rollback.derivations(tenant, seeds, depth);

  record: IngestLookups['record'] = (scope, id, asOf) => this.reads.record(scope, id, asOf);
  /** The gather step's batched lookups (ingest-batch.ts): one round trip per kind for a whole request. */
  relateCandidatesMany: IngestLookups['relateCandidatesMany'] = async (scope, namespace, queries, k) => {
    if (queries.length === 0) return [];
    const answer = await this.relate.read({ scope, namespace, queries, k });
    if ('failed' in answer) throw answer.failed;
    return answer;
  };
  entityFacts: IngestLookups['entityFacts'] = (scope, probes) =>
    entityFacts(this.db, this.entities, scope, probes);
  findEntity: IngestLookups['findEntity'] = (scope, ref) => this.reads.findEntity(scope, ref);

  receipt(tenant: string, idempotencyKey: string): Promise<Receipt | undefined> {
    return this.receipts.read({ tenant, key: idempotencyKey });
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

  grantsFor(tenant: string, grantees: readonly string[]): Promise<GrantState[]> {
    if (grantees.length === 0) return Promise.resolve([]);
    return this.grants.read({ tenant, grantees });
  }
}

type ReceiptKey = { readonly tenant: string; readonly key: string };
type GranteesKey = { readonly tenant: string; readonly grantees: readonly string[] };

/** The receipts of several (tenant, idempotency key) pairs, one statement; undefined where none is stored. */
async function receiptsByKey(db: Executor, keys: readonly ReceiptKey[]): Promise<Array<Receipt | undefined>> {
  const res = await db.read(
    'receipt.get',
    `UNWIND $keys AS k
     MATCH (r:Receipt {tenant: k.tenant, idempotencyKey: k.key})
     RETURN k.i AS i, r`,
    { keys: keys.map((k, i) => ({ i, tenant: k.tenant, key: k.key })) },
  );
  const out: Array<Receipt | undefined> = keys.map(() => undefined);
  for (const r of res.records) out[Number(r.get('i'))] = toReceipt(r.get('r').properties);
  return out;
}

/**
 * Each query's grants of its grantees in its tenant, by id, one statement. Revoked grants too: an identity
 * whose last grant was revoked has no access, not the default.
 */
async function grantsByGrantees(db: Executor, qs: readonly GranteesKey[]): Promise<GrantState[][]> {
  const res = await db.read(
    'grants.for',
    `UNWIND $qs AS q
     MATCH (g:Grant {tenant: q.tenant}) WHERE g.grantee IN q.grantees
     RETURN q.i AS i, g ORDER BY i, g.id`,
    { qs: qs.map((q, i) => ({ i, tenant: q.tenant, grantees: [...q.grantees] })) },
  );
  const out: GrantState[][] = qs.map(() => []);
  for (const r of res.records) out[Number(r.get('i'))]!.push(toGrant(r.get('g').properties));
  return out;
}
