import type { FindingState } from '../../domain/fold.ts';
import { REVIEW_BY_EXT, reviewByOf, type ScoreRow } from '../../domain/scorecard.ts';
import {
  commonNamespace,
  type CandidateRow,
  type ContestedRow,
  type DuplicateRow,
  type OrphanRow,
  type StaleRow,
  type UtilityRow,
} from '../../domain/stewardship.ts';
import type { ReadScope } from '../../ports/graph.ts';
import type { StewardLookups, StewardReads } from '../../ports/steward.ts';
import type { Record as Neo4jRecord } from 'neo4j-driver';
import type { Executor } from './executor.ts';
import { str, strings, toFinding, type Props } from './mapping.ts';
import { entityVisible, IN_SUBTREE, SCOPE_WHERE, scopeParams } from './scope.ts';

const LIVE = `['ACTIVE', 'CONTESTED']`;
/** How the key appears in the canonical extJson (a cheap filter before parsing). */
const REVIEW_BY_KEY = JSON.stringify(REVIEW_BY_EXT);
const reviewBy = (extJson: unknown): string | null =>
  typeof extJson === 'string' && extJson.includes(REVIEW_BY_KEY)
    ? reviewByOf(JSON.parse(extJson) as Record<string, unknown>)
    : null;

/** The steward checks' tenant-wide reads: every statement is bound to one $tenant. */
export class Neo4jStewardLookups implements StewardLookups {
  constructor(private readonly db: Executor) {}

  async tenants(): Promise<string[]> {
    const res = await this.db.read('steward.tenants', 'MATCH (n:Record) RETURN DISTINCT n.tenant AS t');
    return res.records.map((r) => str(r.get('t'))).sort();
  }

  async staleRows(tenant: string, now: string): Promise<StaleRow[]> {
    const res = await this.db.read(
      'steward.stale',
      `MATCH (n:Record {tenant: $tenant}) WHERE n.status IN ${LIVE}
         AND ((n.validTo IS NOT NULL AND n.validTo <= $now) OR n.extJson CONTAINS $reviewByKey)
       RETURN n.id AS id, n.namespace AS ns, n.class AS class, n.validTo AS validTo, n.extJson AS ext`,
      { tenant, now, reviewByKey: REVIEW_BY_KEY },
    );
    return res.records.map((r) => ({
      id: str(r.get('id')),
      namespace: str(r.get('ns')),
      class: str(r.get('class')),
      validTo: (r.get('validTo') as string | null) ?? null,
      reviewBy: reviewBy(r.get('ext')),
    }));
  }

  async contestedRows(tenant: string, before: string): Promise<ContestedRow[]> {
    const res = await this.db.read(
      'steward.contested',
      `MATCH (a:Record {tenant: $tenant})-[c:CONTRADICTS]->(b:Record {tenant: $tenant})
       WHERE a.status IN ${LIVE} AND b.status IN ${LIVE} AND 'CONTESTED' IN [a.status, b.status]
         AND c.recordedAt <= $before
       RETURN a.id AS a, b.id AS b, a.namespace AS na, b.namespace AS nb, c.recordedAt AS since`,
      { tenant, before },
    );
    return res.records.map((r) => ({
      a: str(r.get('a')),
      b: str(r.get('b')),
      namespace: commonNamespace([str(r.get('na')), str(r.get('nb'))]) ?? str(r.get('na')),
      since: str(r.get('since')),
    }));
  }

  async orphanRows(tenant: string): Promise<OrphanRow[]> {
    const res = await this.db.read(
      'steward.orphans',
      `MATCH (e:Entity {tenant: $tenant})<-[:ABOUT]-(n:Record)
       WITH e, collect(DISTINCT n.namespace) AS namespaces, collect(n.status) AS statuses
       WHERE none(s IN statuses WHERE s IN ['ACTIVE', 'CONTESTED', 'CANDIDATE'])
       RETURN e.id AS id, namespaces`,
      { tenant },
    );
    return res.records.map((r) => ({ entityId: str(r.get('id')), namespaces: strings(r.get('namespaces')) }));
  }

  /**
   * Each live record's nearest neighbours from the ANN index (over-fetched: the index spans tenants),
   * kept when in the same tenant and namespace; Neo4j's cosine score is (1 + cos) / 2.
   */
  duplicateRows(tenant: string, cosine: number): Promise<DuplicateRow[]> {
    return this.duplicates(tenant, cosine, null);
  }

  duplicateRowsSince(tenant: string, cosine: number, since: string): Promise<DuplicateRow[]> {
    return this.duplicates(tenant, cosine, since);
  }

  /** One k-NN query per live record (changed after `since`, when given): the cost of a sweep. */
  private async duplicates(tenant: string, cosine: number, since: string | null): Promise<DuplicateRow[]> {
    const res = await this.db.read(
      'steward.duplicates',
      `MATCH (n:Record {tenant: $tenant}) WHERE n.status IN ${LIVE} AND n.class <> 'OBSERVATION'
         AND n.embedding IS NOT NULL AND ($since IS NULL OR n.recordedAt > $since)
       CALL (n) {
         CALL db.index.vector.queryNodes('record_embedding', 50, n.embedding) YIELD node AS m, score
         WHERE m.tenant = n.tenant AND m.namespace = n.namespace AND m.id <> n.id
           AND ($since IS NOT NULL OR m.id > n.id)
           AND m.status IN ${LIVE} AND m.class <> 'OBSERVATION' AND score >= $score
           AND m.embeddingModel = n.embeddingModel
         RETURN m, score
       }
       RETURN n.id AS a, m.id AS b, n.namespace AS ns, score, ${TEXTS}`,
      { tenant, score: (1 + cosine) / 2, since },
    );
    return res.records.map(duplicateRow);
  }

  async duplicatePairs(
    tenant: string,
    cosine: number,
    pairs: ReadonlyArray<readonly [string, string]>,
  ): Promise<DuplicateRow[]> {
    if (pairs.length === 0) return [];
    const res = await this.db.read(
      'steward.duplicatePairs',
      `UNWIND $pairs AS p
       MATCH (n:Record {tenant: $tenant, id: p[0]}), (m:Record {tenant: $tenant, id: p[1]})
       WHERE n.namespace = m.namespace AND n.status IN ${LIVE} AND m.status IN ${LIVE}
         AND n.class <> 'OBSERVATION' AND m.class <> 'OBSERVATION'
         AND n.embedding IS NOT NULL AND m.embedding IS NOT NULL AND n.embeddingModel = m.embeddingModel
       WITH n, m, vector.similarity.cosine(n.embedding, m.embedding) AS score
       WHERE score >= $score
       RETURN n.id AS a, m.id AS b, n.namespace AS ns, score, ${TEXTS}`,
      { tenant, score: (1 + cosine) / 2, pairs: pairs.map((p) => [...p]) },
    );
    return res.records.map(duplicateRow);
  }

  async candidateRows(tenant: string, before: string): Promise<CandidateRow[]> {
    const res = await this.db.read(
      'steward.candidates',
      `MATCH (n:Record {tenant: $tenant, status: 'CANDIDATE'}) WHERE n.createdAt <= $before
       RETURN n.id AS id, n.namespace AS ns, n.createdAt AS createdAt`,
      { tenant, before },
    );
    return res.records.map((r) => ({
      id: str(r.get('id')),
      namespace: str(r.get('ns')),
      createdAt: str(r.get('createdAt')),
    }));
  }

  async utilityRows(tenant: string): Promise<UtilityRow[]> {
    const res = await this.db.read(
      'steward.utility',
      `MATCH (n:Record {tenant: $tenant}) WHERE n.status IN ${LIVE}
         AND coalesce(n.feedbackUsed, 0) + coalesce(n.feedbackIgnored, 0) + coalesce(n.feedbackWrong, 0) > 0
       RETURN n.id AS id, n.namespace AS ns, n.utility AS utility,
              n.feedbackUsed + n.feedbackIgnored + n.feedbackWrong AS votes, n.feedbackWrong AS wrong`,
      { tenant },
    );
    return res.records.map((r) => ({
      id: str(r.get('id')),
      namespace: str(r.get('ns')),
      utility: Number(r.get('utility')),
      votes: Number(r.get('votes')),
      wrong: Number(r.get('wrong')),
    }));
  }

  async findings(tenant: string): Promise<FindingState[]> {
    const res = await this.db.read('steward.findings', 'MATCH (f:Finding {tenant: $tenant}) RETURN f', {
      tenant,
    });
    return res.records.map((r) => toFinding(r.get('f').properties as Props));
  }
}

/** Neo4j's vector scores are (1 + cosine) / 2: back to the cosine the thresholds speak. */
const duplicateRow = (r: Neo4jRecord): DuplicateRow => ({
  a: str(r.get('a')),
  b: str(r.get('b')),
  namespace: str(r.get('ns')),
  cosine: Math.round((2 * Number(r.get('score')) - 1) * 1000) / 1000,
  texts: [str(r.get('aText')), str(r.get('bText'))],
});

/** Each side's subject, object and wording: where the identifiers a pair names are read from. */
const TEXTS = `n.subject + ' ' + n.object + ' ' + n.text AS aText,
       m.subject + ' ' + m.object + ' ' + m.text AS bText`;

/** A finding never tells about what its reader cannot read: every record and entity it names is visible. */
const FINDING_VISIBLE = `all(id IN f.recordIds WHERE EXISTS {
         MATCH (n:Record {tenant: $tenant, id: id}) WHERE ${SCOPE_WHERE} })
       AND all(id IN f.entityIds WHERE EXISTS {
         MATCH (e:Entity {tenant: $tenant, id: id}) WHERE ${entityVisible('e')} })`;

/** Findings and scorecard rows, each statement carrying the caller's scope (scope.ts). */
export class Neo4jStewardReads implements StewardReads {
  constructor(private readonly db: Executor) {}

  async findings(
    scope: ReadScope,
    namespace: string,
    open: boolean | null,
    first: number,
  ): Promise<FindingState[]> {
    const res = await this.db.read(
      'steward.findingsInScope',
      `MATCH (f:Finding {tenant: $tenant})
       WHERE (f.namespace = $ns OR f.namespace STARTS WITH $ns + '/')
         AND ($open IS NULL OR (f.resolvedAt IS NULL) = $open)
         AND ${FINDING_VISIBLE}
       RETURN f ORDER BY f.raisedAt DESC, f.id LIMIT toInteger($first)`,
      { ...scopeParams(scope), ns: namespace, open, first },
    );
    return res.records.map((r) => toFinding(r.get('f').properties as Props));
  }

  async finding(scope: ReadScope, id: string): Promise<FindingState | undefined> {
    const res = await this.db.read(
      'steward.findingInScope',
      `MATCH (f:Finding {tenant: $tenant, id: $id}) WHERE ${FINDING_VISIBLE} RETURN f`,
      { ...scopeParams(scope), id },
    );
    const row = res.records[0];
    return row ? toFinding(row.get('f').properties as Props) : undefined;
  }

  async scoreRows(scope: ReadScope, namespace: string): Promise<ScoreRow[]> {
    const res = await this.db.read(
      'steward.scoreRows',
      `MATCH (n:Record {tenant: $tenant}) WHERE ${SCOPE_WHERE} AND ${IN_SUBTREE}
       RETURN n.status AS status, n.validTo AS validTo, n.createdAt AS createdAt,
              n.approvedAt AS approvedAt, EXISTS { (n)-[:ABOUT]->(:Entity) } AS linked,
              coalesce(n.utility, 0.0) AS utility,
              coalesce(n.feedbackUsed, 0) + coalesce(n.feedbackIgnored, 0) + coalesce(n.feedbackWrong, 0) AS votes,
              CASE WHEN n.extJson CONTAINS $reviewByKey THEN n.extJson END AS ext`,
      { ...scopeParams(scope), ns: namespace, reviewByKey: REVIEW_BY_KEY },
    );
    return res.records.map((r) => ({
      status: r.get('status') as ScoreRow['status'],
      validTo: (r.get('validTo') as string | null) ?? null,
      reviewBy: reviewBy(r.get('ext')),
      createdAt: str(r.get('createdAt')),
      approvedAt: (r.get('approvedAt') as string | null) ?? null,
      linked: Boolean(r.get('linked')),
      utility: Number(r.get('utility')),
      votes: Number(r.get('votes')),
    }));
  }
}
