import type {
  AnalyticsReads,
  Change,
  ChangeKind,
  ChangeQuery,
  CountBucket,
  RecordCounts,
  RecordLink,
} from '../../ports/analytics.ts';
import type { AsOf, Page, ReadScope, RecordQuery } from '../../ports/graph.ts';
import type { Executor } from './executor.ts';
import { toRevisionView } from './view-mapping.ts';
import { recordFilter } from './record-reads.ts';
import { IN_SUBTREE, SCOPE_WHERE, scopeParams } from './scope.ts';

/**
 * The analysts' read model, in hand-written Cypher through the one executor. Counts and neighbourhoods
 * reuse the exact filter text of `records` (`recordFilter` of record-reads.ts: scope, subtree, statuses and
 * both time axes), so a count always equals what the listing would return; `changes` applies the same
 * scope predicate (scope.ts) to the record before it looks at any revision.
 */
export class Neo4jAnalytics implements AnalyticsReads {
  constructor(private readonly db: Executor) {}

  async recordCounts(scope: ReadScope, q: RecordQuery, asOf: AsOf): Promise<RecordCounts> {
    const f = recordFilter(scope, q, asOf, null);
    const tally = (m: Map<string, number>, key: string, n: number) => m.set(key, (m.get(key) ?? 0) + n);
    const sorted = (m: Map<string, number>): CountBucket[] =>
      [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, count]) => ({ key, count }));
    // One read transaction; Neo4j aggregates, only the groups come back: one per (class, status,
    // predicate) combination that occurs, and one per entity.
    return this.db.readTx('analytics.counts', async (tx) => {
      const groups = await tx.run(
        `${f.cypher} RETURN n.class AS class, v.status AS status, v.predicate AS predicate, count(*) AS c`,
        f.params,
      );
      const byClass = new Map<string, number>();
      const byStatus = new Map<string, number>();
      const byPredicate = new Map<string, number>();
      let total = 0;
      for (const r of groups.records) {
        const c = Number(r.get('c'));
        total += c;
        tally(byClass, String(r.get('class')), c);
        tally(byStatus, String(r.get('status')), c);
        tally(byPredicate, String(r.get('predicate')), c);
      }
      // ABOUT edges are written once, when the record is proposed, so they hold at any knownAt.
      const entities = await tx.run(
        `${f.cypher} MATCH (n)-[:ABOUT]->(e:Entity) RETURN e.id AS key, count(DISTINCT n) AS c`,
        f.params,
      );
      const byEntity = new Map(entities.records.map((r) => [String(r.get('key')), Number(r.get('c'))]));
      return {
        total,
        byClass: sorted(byClass),
        byStatus: sorted(byStatus),
        byPredicate: sorted(byPredicate),
        byEntity: sorted(byEntity),
      };
    });
  }

  async linksAmong(scope: ReadScope, q: RecordQuery, asOf: AsOf): Promise<RecordLink[]> {
    const f = recordFilter(scope, q, asOf, null);
    // Both ends come out of the same scoped filter; a relation recorded after knownAt did not exist then.
    const res = await this.db.read(
      'analytics.links',
      `${f.cypher}
       WITH collect(DISTINCT n) AS ns
       UNWIND ns AS a
       MATCH (a)-[r:EXTENDS|CONTRADICTS|SUPERSEDES]->(b:Record) WHERE b IN ns
         AND ($linksKnownAt IS NULL OR r.recordedAt <= $linksKnownAt)
       RETURN a.id AS fromId, type(r) AS type, b.id AS toId, r.confidence AS confidence, r.reason AS reason,
              r.recordedAt AS recordedAt
       ORDER BY fromId, type, toId`,
      { ...f.params, linksKnownAt: asOf.knownAt ?? null },
    );
    return res.records.map((r) => ({
      fromId: String(r.get('fromId')),
      type: String(r.get('type')),
      toId: String(r.get('toId')),
      confidence: Number(r.get('confidence')),
      reason: r.get('reason') === null ? null : String(r.get('reason')),
      recordedAt: String(r.get('recordedAt')),
    }));
  }

  async sameAs(tenant: string, entityId: string): Promise<string[]> {
    const res = await this.db.read(
      'analytics.sameAs',
      `MATCH (:Entity {tenant: $tenant, id: $id})-[:SAME_AS]-(o:Entity {tenant: $tenant})
       RETURN DISTINCT o.id AS id ORDER BY id`,
      { tenant, id: entityId },
    );
    return res.records.map((r) => String(r.get('id')));
  }

  /**
   * Every change in (from, to] of system time: a record's first revision (CREATED), and each revision
   * that moved it into SUPERSEDED or RETRACTED. The record passes the scope predicate first.
   */
  private changeQuery(scope: ReadScope, q: ChangeQuery) {
    const cypher = `MATCH (n:Record) WHERE ${SCOPE_WHERE}
         AND ${IN_SUBTREE}
         AND ($classes IS NULL OR n.class IN $classes)
       MATCH (n)-[:HAS_REVISION]->(v:Revision)
       WHERE v.recordedAt > $from AND v.recordedAt <= $to
         AND (v.version = 1 OR (v.status IN ['SUPERSEDED', 'RETRACTED'] AND NOT EXISTS {
               MATCH (n)-[:HAS_REVISION]->(p:Revision) WHERE p.version = v.version - 1 AND p.status = v.status }))
       UNWIND (CASE WHEN v.version = 1 THEN ['CREATED'] ELSE [] END
               + CASE WHEN v.status IN ['SUPERSEDED', 'RETRACTED'] THEN [v.status] ELSE [] END) AS kind
       WITH n, v, kind WHERE $kinds IS NULL OR kind IN $kinds`;
    const params = {
      ...scopeParams(scope),
      ns: q.namespace,
      classes: q.classes ?? null,
      kinds: q.kinds ?? null,
      from: q.from,
      to: q.to,
    };
    return { cypher, params };
  }

  async changes(
    scope: ReadScope,
    q: ChangeQuery,
    first: number,
    after: string | null,
  ): Promise<Page<Change>> {
    const { cypher, params } = this.changeQuery(scope, q);
    const res = await this.db.read(
      'analytics.changes',
      `${cypher}
       WITH n, v, kind, v.recordedAt + '|' + n.id + '|' + kind AS cursor WHERE cursor > $after
       RETURN kind, n.id AS id, v, cursor ORDER BY cursor LIMIT toInteger($limit)`,
      { ...params, after: after ?? '', limit: first + 1 },
    );
    const rows = res.records.map((r) => ({
      kind: r.get('kind') as ChangeKind,
      recordId: String(r.get('id')),
      revision: toRevisionView(r.get('v').properties),
      cursor: String(r.get('cursor')),
    }));
    const items = rows.slice(0, first).map(({ cursor: _c, ...c }) => ({ ...c, at: c.revision.recordedAt }));
    return {
      items,
      hasNextPage: rows.length > first,
      endCursor: items.length ? rows[items.length - 1]!.cursor : null,
    };
  }

  async changeCounts(scope: ReadScope, q: ChangeQuery): Promise<CountBucket[]> {
    const { cypher, params } = this.changeQuery(scope, q);
    const res = await this.db.read(
      'analytics.changeCounts',
      `${cypher} RETURN kind AS key, count(*) AS c ORDER BY key`,
      params,
    );
    return res.records.map((r) => ({ key: String(r.get('key')), count: Number(r.get('c')) }));
  }
}

/** Proposals waiting for a reviewer over every tenant: an operator's figure (/metrics), never a tenant's answer. */
export async function reviewQueueDepth(db: Executor): Promise<number> {
  const res = await db.read(
    'metrics.reviewQueue',
    `MATCH (n:Record {status: 'CANDIDATE'}) RETURN count(n) AS c`,
  );
  return Number(res.records[0]?.get('c') ?? 0);
}
