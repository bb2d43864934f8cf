import type { EntityState, GrantState } from '../../domain/fold.ts';
import type {
  AsOf,
  Page,
  Proposal,
  ReadScope,
  RecordQuery,
  RecordReads,
  RecordView,
  RelationView,
  RevisionView,
} from '../../ports/graph.ts';
import { ENTITY_TARGET_TYPES } from '../../domain/relations.ts';
import { relType, type Executor } from './executor.ts';
import { optStr, RELATION_TYPES, toEntity, toGrant, type Props } from './mapping.ts';
import { RECORD_VIEW_LIST, viewProps, toRecordView, toRevisionView } from './view-mapping.ts';
import { END_OF_TIME, entityVisible, IN_SUBTREE, SCOPE_WHERE, scopeParams, scopeWhere } from './scope.ts';

/** Scoped reads of records, their history and relations, entities, the review queue and grants. */
export class Neo4jRecordReads implements RecordReads {
  constructor(private readonly db: Executor) {}

  async record(scope: ReadScope, id: string, asOf: AsOf = {}): Promise<RecordView | undefined> {
    if (!asOf.knownAt && !asOf.validAt) {
      const res = await this.db.read(
        'record.now',
        `MATCH (n:Record {tenant: $tenant, id: $id}) WHERE ${SCOPE_WHERE}
         OPTIONAL MATCH (n)-[:ABOUT]->(e:Entity) RETURN n, collect(e.id) AS about`,
        { ...scopeParams(scope), id },
      );
      const r = res.records[0];
      return r ? toRecordView(r.get('n').properties, null, r.get('about')) : undefined;
    }
    const res = await this.db.read(
      'record.asOf',
      `MATCH (n:Record {tenant: $tenant, id: $id}) WHERE ${SCOPE_WHERE}
       MATCH (n)-[:HAS_REVISION]->(v:Revision)
       WHERE v.recordedAt <= $knownAt AND (v.retiredAt IS NULL OR v.retiredAt > $knownAt)
         AND ($validAt IS NULL OR (v.validFrom <= $validAt AND coalesce(v.validTo, $eot) > $validAt))
       OPTIONAL MATCH (n)-[:ABOUT]->(e:Entity)
       RETURN n, v, collect(e.id) AS about`,
      {
        ...scopeParams(scope),
        id,
        knownAt: asOf.knownAt ?? END_OF_TIME,
        validAt: asOf.validAt ?? null,
        eot: END_OF_TIME,
      },
    );
    const r = res.records[0];
    if (!r) return undefined;
    const view = toRecordView(r.get('n').properties, r.get('v').properties, r.get('about'));
    // A taint set after the asked system time was not yet believed then.
    return asOf.knownAt && view.taint && view.taint.at > asOf.knownAt ? { ...view, taint: null } : view;
  }

  async recordCount(scope: ReadScope, q: RecordQuery, asOf: AsOf): Promise<number> {
    const f = recordFilter(scope, q, asOf, null);
    const res = await this.db.read('records.count', `${f.cypher} RETURN count(n) AS c`, f.params);
    return Number(res.records[0]?.get('c') ?? 0);
  }

  async records(
    scope: ReadScope,
    q: RecordQuery,
    asOf: AsOf,
    first: number,
    after: string | null,
  ): Promise<Page<RecordView>> {
    const { cypher, params, current } = recordFilter(scope, q, asOf, after);
    const res = await this.db.read(
      'records.list',
      `${cypher}
       WITH n, v ORDER BY n.id LIMIT toInteger($limit)
       OPTIONAL MATCH (n)-[:ABOUT]->(e:Entity)
       RETURN n, v, collect(e.id) AS about ORDER BY n.id`,
      { ...params, limit: first + 1 },
    );
    const rows = res.records.map((r) =>
      toRecordView(r.get('n').properties, current ? null : r.get('v').properties, r.get('about')),
    );
    const hasNextPage = rows.length > first;
    const items = rows.slice(0, first);
    return { items, hasNextPage, endCursor: items.length ? items[items.length - 1]!.id : null };
  }

  async history(scope: ReadScope, id: string): Promise<RevisionView[]> {
    const res = await this.db.read(
      'record.history',
      `MATCH (n:Record {tenant: $tenant, id: $id}) WHERE ${SCOPE_WHERE}
       MATCH (n)-[:HAS_REVISION]->(v:Revision) RETURN v ORDER BY v.version`,
      { ...scopeParams(scope), id },
    );
    return res.records.map((r) => toRevisionView(r.get('v').properties));
  }

  async entities(scope: ReadScope, ids: readonly string[]): Promise<EntityState[]> {
    const res = await this.db.read(
      'entities.get',
      `MATCH (e:Entity) WHERE e.id IN $ids AND ${entityVisible('e')} RETURN e`,
      { ...scopeParams(scope), ids },
    );
    return res.records.map((r) => toEntity(r.get('e').properties));
  }

  async findEntity(
    scope: ReadScope,
    ref: {
      id?: string | undefined;
      alias?: string | undefined;
      externalId?: string | undefined;
      type?: string | undefined;
    },
  ): Promise<EntityState | undefined> {
    // An alias names an entity of a type: "Mercury" the planet is not "Mercury" the project.
    const res = await this.db.read(
      'entity.find',
      `MATCH (e:Entity {tenant: $tenant})
       WHERE (($id IS NOT NULL AND e.id = $id)
          OR ($ext IS NOT NULL AND $ext IN e.externalIds)
          OR ($alias IS NOT NULL AND (toLower(e.name) = $alias OR $alias IN e.aliases)
              AND ($type IS NULL OR e.type IS NULL OR e.type = $type)))
         AND ${entityVisible('e')}
       RETURN e ORDER BY e.id LIMIT 1`,
      {
        ...scopeParams(scope),
        id: ref.id ?? null,
        ext: ref.externalId ?? null,
        alias: ref.alias?.toLowerCase() ?? null,
        type: ref.type ?? null,
      },
    );
    const r = res.records[0];
    return r ? toEntity(r.get('e').properties) : undefined;
  }

  async relations(scope: ReadScope, id: string): Promise<RelationView[]> {
    // Both directions between records the caller may read; record → entity edges to visible entities.
    // `eventId` marks a projected relation (not ABOUT, nor a DERIVED_FROM to the source episode).
    const res = await this.db.read(
      'record.relations',
      `MATCH (n:Record {tenant: $tenant, id: $id}) WHERE ${SCOPE_WHERE}
       CALL (n) {
         MATCH (n)-[r:${RELATION_TYPES.map(relType).join('|')}]-(o:Record) WHERE r.eventId IS NOT NULL AND ${scopeWhere('o')}
         RETURN r, o, 'RECORD' AS kind
         UNION
         MATCH (n)-[r:${ENTITY_TARGET_TYPES.map(relType).join('|')}]->(o:Entity) WHERE r.eventId IS NOT NULL AND ${entityVisible('o')}
         RETURN r, o, 'ENTITY' AS kind
       }
       RETURN type(r) AS type, CASE WHEN startNode(r) = n THEN 'OUT' ELSE 'IN' END AS direction, o.id AS other,
              kind, r.confidence AS confidence, r.reason AS reason, r.validFrom AS validFrom, r.validTo AS validTo,
              r.recordedAt AS recordedAt
       ORDER BY type, other`,
      { ...scopeParams(scope), id },
    );
    return res.records.map((r) => ({
      type: String(r.get('type')),
      direction: r.get('direction') as 'OUT' | 'IN',
      otherId: String(r.get('other')),
      targetKind: r.get('kind') as 'RECORD' | 'ENTITY',
      confidence: Number(r.get('confidence')),
      reason: optStr(r.get('reason')),
      validFrom: optStr(r.get('validFrom')),
      validTo: optStr(r.get('validTo')),
      recordedAt: optStr(r.get('recordedAt')),
    }));
  }

  async reviewQueue(
    scope: ReadScope,
    namespace: string,
    first: number,
    after: string | null,
  ): Promise<Page<Proposal>> {
    const res = await this.db.read(
      'review.queue',
      // Proposals, and live records a rollback flagged (tainted, or a revert that would overwrite a person).
      `MATCH (n:Record {tenant: $tenant})
       WHERE (n.status = 'CANDIDATE' OR (n.needsReview = true AND n.status IN ['ACTIVE', 'CONTESTED']))
         AND ${SCOPE_WHERE}
         AND ${IN_SUBTREE}
         AND (n.createdAt + '|' + n.id) > $after
       WITH n ORDER BY n.createdAt, n.id LIMIT toInteger($limit)
       OPTIONAL MATCH (n)-[:ABOUT]->(e:Entity)
       RETURN n, collect(e.id) AS about ORDER BY n.createdAt, n.id`,
      { ...scopeParams(scope), ns: namespace, after: after ?? '', limit: first + 1 },
    );
    const rows = res.records.map((r) => {
      const n = r.get('n').properties as Props;
      return {
        record: toRecordView(n, null, r.get('about')),
        reviewReasons: (n['reviewReasons'] as string[] | undefined) ?? [],
        flags: (n['flags'] as string[] | undefined) ?? [],
      };
    });
    const items = rows.slice(0, first);
    const last = items[items.length - 1];
    return {
      items,
      hasNextPage: rows.length > first,
      endCursor: last ? `${last.record.createdAt}|${last.record.id}` : null,
    };
  }

  async recordsByIds(
    scope: ReadScope,
    ids: readonly string[],
    knownAt: string | null = null,
  ): Promise<Array<RecordView & { contradicts: string[] }>> {
    if (ids.length === 0) return [];
    const res = await this.db.read(
      'recall.records',
      `MATCH (n:Record {tenant: $tenant}) WHERE n.id IN $ids AND ${SCOPE_WHERE}
       OPTIONAL MATCH (n)-[:HAS_REVISION]->(v:Revision)
         WHERE $knownAt IS NOT NULL AND v.recordedAt <= $knownAt AND (v.retiredAt IS NULL OR v.retiredAt > $knownAt)
       WITH n, v WHERE $knownAt IS NULL OR v IS NOT NULL
       OPTIONAL MATCH (n)-[:ABOUT]->(e:Entity)
       WITH n, v, collect(e.id) AS about
       // Only what the view reads: not the embedding (~3 KB a record that ranking does not read).
       RETURN ${RECORD_VIEW_LIST} AS n, v, about, COLLECT {
         MATCH (n)-[c:CONTRADICTS]-(o:Record) WHERE ${scopeWhere('o')} AND ($knownAt IS NULL OR c.recordedAt <= $knownAt)
         RETURN o.id } AS contradicts`,
      { ...scopeParams(scope), ids: [...ids], knownAt },
    );
    return res.records.map((r) => {
      const view = toRecordView(
        viewProps(r.get('n') as unknown[]),
        r.get('v')?.properties ?? null,
        r.get('about'),
      );
      // As in `record`: a taint set after `knownAt` was not yet believed then.
      const taint = knownAt && view.taint && view.taint.at > knownAt ? null : (view.taint ?? null);
      return { ...view, taint, contradicts: r.get('contradicts') as string[] };
    });
  }

  async grants(tenant: string): Promise<GrantState[]> {
    const res = await this.db.read(
      'grants.list',
      'MATCH (g:Grant {tenant: $tenant}) RETURN g ORDER BY g.grantedAt DESC, g.id',
      { tenant },
    );
    return res.records.map((r) => toGrant(r.get('g').properties));
  }
}

/** The structured filter of `records` and `recordCount`: one query text, so a count never disagrees. */
export function recordFilter(scope: ReadScope, q: RecordQuery, asOf: AsOf, after: string | null) {
  const current = !asOf.knownAt;
  // Statuses default to what is believed now: not superseded, retracted, rejected or erased.
  // A world-time query (validAt) also admits SUPERSEDED: it was true then.
  const statusDefault = asOf.validAt ? ['ACTIVE', 'CONTESTED', 'SUPERSEDED'] : ['ACTIVE', 'CONTESTED'];
  const params = {
    ...scopeParams(scope),
    ns: q.namespace,
    classes: q.classes ?? null,
    statuses: q.statuses ?? null,
    about: q.aboutEntityIds ?? null,
    predicate: q.predicate ?? null,
    text: q.textContains?.toLowerCase() ?? null,
    changeset: q.changesetId ?? null,
    knownAt: asOf.knownAt ?? END_OF_TIME,
    validAt: asOf.validAt ?? null,
    eot: END_OF_TIME,
    after: after ?? '',
    statusDefault,
  };
  const revisionMatch = current
    ? 'WITH n, n AS v'
    : `MATCH (n)-[:HAS_REVISION]->(v:Revision)
         WHERE v.recordedAt <= $knownAt AND (v.retiredAt IS NULL OR v.retiredAt > $knownAt)`;
  const cypher = `MATCH (n:Record) WHERE ${SCOPE_WHERE} AND ${IN_SUBTREE} AND n.id > $after
         AND ($classes IS NULL OR n.class IN $classes)
         AND ($changeset IS NULL OR n.changesetId = $changeset)
         AND ($about IS NULL OR EXISTS { MATCH (n)-[:ABOUT]->(e:Entity) WHERE e.id IN $about })
       ${revisionMatch}
       WITH n, v WHERE (CASE WHEN $statuses IS NULL THEN v.status IN $statusDefault ELSE v.status IN $statuses END)
         AND ($predicate IS NULL OR v.predicate = $predicate)
         AND ($text IS NULL OR toLower(v.text) CONTAINS $text)
         AND ($validAt IS NULL OR (v.validFrom <= $validAt AND coalesce(v.validTo, $eot) > $validAt))`;
  return { cypher, params, current };
}
