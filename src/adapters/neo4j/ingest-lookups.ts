import type { Record as Neo4jRecord } from 'neo4j-driver';
import type { EntityState, GrantState, Receipt } from '../../domain/fold.ts';
import { namespaceChain, type RecordClass, type RecordStatus, type Sensitivity } from '../../domain/model.ts';
import type { IngestLookups, ReadScope, RelatedCandidate } from '../../ports/graph.ts';
import { entityFacts, relateCandidatesMany } from './ingest-batch.ts';
import type { Executor } from './executor.ts';
import { toEntity, toGrant, toReceipt } from './mapping.ts';
import { Neo4jRecordReads } from './record-reads.ts';
import { entityVisible, IN_CHAIN_OR_SUBTREE, SCOPE_WHERE, scopeParams } from './scope.ts';

/** What the write path looks up before it decides: receipts, entity matches, relate candidates, grants. Never writes. */
export class Neo4jIngestLookups implements IngestLookups {
  private readonly reads: Neo4jRecordReads;

  constructor(private readonly db: Executor) {
    this.reads = new Neo4jRecordReads(db);
  }

  record: IngestLookups['record'] = (scope, id, asOf) => this.reads.record(scope, id, asOf);
  /** The gather step's batched lookups (ingest-batch.ts): one round trip per kind for a whole request. */
  relateCandidatesMany: IngestLookups['relateCandidatesMany'] = (scope, ns, queries, k) =>
    relateCandidatesMany(this.db, scope, ns, queries, k);
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

  async entityExists(tenant: string, id: string): Promise<boolean> {
    const res = await this.db.read(
      'entity.exists',
      'MATCH (e:Entity {tenant: $tenant, id: $id}) RETURN count(e) AS c',
      { tenant, id },
    );
    return Number(res.records[0]?.get('c') ?? 0) > 0;
  }

  async entityNeighbours(
    scope: ReadScope,
    vector: readonly number[],
    k: number,
  ): Promise<Array<EntityState & { cosine: number }>> {
    // Exact within the tenant: other tenants' entities must never crowd this tenant's out of an ANN
    // top-k; and only among the entities the caller may see (the visibility check runs before ranking).
    const res = await this.db.read(
      'entity.neighbours',
      `MATCH (e:Entity {tenant: $tenant}) WHERE e.embedding IS NOT NULL AND ${entityVisible('e')}
       WITH e, vector.similarity.cosine(e.embedding, $vector) AS score
       RETURN e, score ORDER BY score DESC, e.id LIMIT toInteger($k)`,
      { ...scopeParams(scope), vector: [...vector], k },
    );
    return res.records.map((r) => ({
      ...toEntity(r.get('e').properties),
      cosine: 2 * Number(r.get('score')) - 1,
    }));
  }

  async relateCandidates(
    scope: ReadScope,
    namespace: string,
    subject: string,
    vector: readonly number[] | null,
    k: number,
  ): Promise<RelatedCandidate[]> {
    const params = {
      ...scopeParams(scope),
      ns: namespace,
      chain: namespaceChain(namespace),
      subjectKey: subject.trim().toLowerCase(),
      k,
    };
    const where = `${SCOPE_WHERE} AND n.class <> 'OBSERVATION'
      AND n.status IN ['ACTIVE', 'CONTESTED', 'CANDIDATE']
      AND ${IN_CHAIN_OR_SUBTREE}`;
    const ret = `RETURN n.id AS id, n.namespace AS namespace, n.sensitivity AS sensitivity, n.class AS class, n.subject AS subject, n.predicate AS predicate,
      n.object AS object, n.text AS text, n.status AS status, n.version AS version, n.confidence AS confidence`;
    const bySubject = await this.db.read(
      'relate.bySubject',
      `MATCH (n:Record {tenant: $tenant, subjectKey: $subjectKey}) WHERE ${where}
       WITH n ORDER BY n.createdAt DESC LIMIT toInteger($k) ${ret}, null AS score`,
      params,
    );
    // The ANN index answers before any WHERE: over-fetch, and when that leaves fewer than k inside the
    // scope (the entitled set is small next to everything else), score the scoped records exactly.
    let byVector = vector
      ? await this.db.read(
          'relate.byVector',
          `CALL db.index.vector.queryNodes('record_embedding', toInteger($fetch), $vector) YIELD node AS n, score
           WHERE ${where}
           WITH n, score ORDER BY score DESC LIMIT toInteger($k) ${ret}, score`,
          { ...params, vector: [...vector], fetch: Math.max(100, k * 20) },
        )
      : null;
    if (vector && byVector && byVector.records.length < k) {
      byVector = await this.db.read(
        'relate.byVectorExact',
        `MATCH (n:Record {tenant: $tenant}) WHERE ${where} AND n.embedding IS NOT NULL
         WITH n, vector.similarity.cosine(n.embedding, $vector) AS score
         ORDER BY score DESC LIMIT toInteger($k) ${ret}, score`,
        { ...params, vector: [...vector] },
      );
    }
    const out = new Map<string, RelatedCandidate>();
    for (const r of [...bySubject.records, ...(byVector?.records ?? [])]) {
      const score = r.get('score') as number | null;
      const id = String(r.get('id'));
      const prev = out.get(id);
      const cosine = score === null ? (prev?.cosine ?? null) : 2 * Number(score) - 1;
      out.set(id, relatedCandidate(r, cosine));
    }
    return [...out.values()];
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

/** A relate query's row (either arm): the statement and, when the vector arm found it, its cosine. */
const relatedCandidate = (r: Neo4jRecord, cosine: number | null): RelatedCandidate => ({
  id: String(r.get('id')),
  namespace: String(r.get('namespace')),
  sensitivity: r.get('sensitivity') as Sensitivity,
  class: r.get('class') as RecordClass,
  subject: String(r.get('subject')),
  predicate: String(r.get('predicate')),
  object: String(r.get('object')),
  text: String(r.get('text')),
  status: r.get('status') as RecordStatus,
  version: Number(r.get('version')),
  confidence: Number(r.get('confidence')),
  cosine,
});
