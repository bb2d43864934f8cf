import type { Record as Neo4jRecord } from 'neo4j-driver';
import { canonicalJson, sha256Hex } from '../../domain/canonical.ts';
import type {
  EntityState,
  EpisodeState,
  GrantState,
  Receipt,
  RecordState,
  RelationState,
  RevisionState,
} from '../../domain/fold.ts';
import { currentRevision, utilityOf } from '../../domain/fold.ts';
import {
  namespaceChain,
  Sensitivities,
  type RecordClass,
  type RecordStatus,
  type Sensitivity,
} from '../../domain/model.ts';
import type {
  ArmQuery,
  AsOf,
  Checkpoint,
  EntityFacts,
  EntityProbe,
  GraphStore,
  LoadedState,
  Page,
  Proposal,
  ProjectionTx,
  ProjectionWrite,
  ReadScope,
  RecordQuery,
  RecordView,
  RelatedCandidate,
  RelateQuery,
  RevisionView,
  StateKeys,
} from '../../ports/graph.ts';
import type { Approval } from '../../domain/review.ts';
import type { HoldState } from '../../domain/hold-fold.ts';
import { relType, type CypherExecutor, type Tx } from './executor.ts';
import { terms as lexicalTerms, type LexicalCandidate } from '../../recall/lexical.ts';
import { entityFacts, relateCandidatesMany } from './ingest-batch.ts';
import { withMigrationLock } from './migration-lock.ts';
import { applyMigrations, migrationsApplied } from './migrations.ts';
import { scopeClause, scopeTerms } from './scope-terms.ts';
import { TURN_CONTEXT_EXT } from '../../domain/turn-context.ts';

export const END_OF_TIME = '9999-12-31T23:59:59.999Z';

/** Words of a free-text query as a Lucene OR query, every special character escaped. */
export function luceneQuery(text: string): string {
  // The words the visible-candidate ranking scores (one split for both), Lucene specials escaped.
  const words = lexicalTerms(text)
    .slice(0, 32)
    .map((w) => w.replace(/[+\-!(){}[\]^"~*?:\\/&|]/g, (c) => `\\${c}`));
  return [...new Set(words)].join(' OR ');
}

const lexicalCandidate = (r: Record<string, unknown>): LexicalCandidate => ({
  id: String(r['id']),
  subject: String(r['subject']),
  text: String(r['text']),
  context: optStr(r['context']),
  validFrom: String(r['validFrom']),
});

/** A node's stable key in the canonical dump (records, entities, episodes by id; revisions and chunks by parent). */
const NODE_KEY = (v: string) =>
  `coalesce(${v}.id, ${v}.recordId + '#' + toString(${v}.version), ${v}.episodeId + '#' + toString(${v}.index))`;

/**
 * The Cypher fragment that enforces a ReadScope on a Record bound to `v`: the tenant, then at least one
 * grant whose subtree holds the record and whose label ceiling covers it. Parameters: $tenant, $grants.
 */
export const scopeWhere = (v: string) => `${v}.tenant = $tenant
  AND any(g IN $grants WHERE (g.root IS NULL OR ${v}.namespace = g.root OR ${v}.namespace STARTS WITH g.root + '/')
                         AND ${v}.sensitivity IN g.labels)`;
export const SCOPE_WHERE = scopeWhere('n');

/**
 * The one entity-visibility predicate, on an Entity bound to `e` (the Record scope's parameters plus
 * $allLabels): the caller sees the whole tenant at every label, or some record it may read is about the
 * entity. Entity names, aliases and external ids from a namespace the caller may not read are not
 * disclosed — nor used to resolve, link or anchor what the caller writes or asks.
 */
export const entityVisible = (e: string) => `${e}.tenant = $tenant
  AND (any(g IN $grants WHERE g.root IS NULL AND size(g.labels) = $allLabels)
       OR EXISTS { MATCH (${e})<-[:ABOUT]-(n:Record) WHERE ${SCOPE_WHERE} })`;

export const scopeParams = (s: ReadScope) => ({
  tenant: s.tenant,
  grants: s.grants.map((g) => ({
    root: g.root,
    labels: Sensitivities.slice(0, Sensitivities.indexOf(g.maxSensitivity) + 1) as Sensitivity[],
  })),
  allLabels: Sensitivities.length,
});

export class Neo4jGraphStore implements GraphStore {
  constructor(readonly db: CypherExecutor) {}

  /** One process at a time (see migration-lock.ts): the schema statements and the backfill, then release. */
  async migrate(): Promise<{ applied: string[] }> {
    return withMigrationLock(this.db, async () => {
      const applied = await applyMigrations(this.db);
      await this.backfillScopeTerms();
      return { applied };
    });
  }

  /**
   * Records projected before migration 009 get their scope terms (one write per namespace), once: a
   * Migration node marks it done, so a start does not scan every record again.
   */
  private async backfillScopeTerms(): Promise<void> {
    const done = await this.db.read(
      'migrations.scopeTermsDone',
      `MATCH (m:Migration {id: 'backfill.scopeTerms'}) RETURN count(m) AS c`,
    );
    if (Number(done.records[0]?.get('c') ?? 0) > 0) return;
    const res = await this.db.read(
      'migrations.scopeTermsMissing',
      `MATCH (n:Record) WHERE n.scopeTerms IS NULL RETURN DISTINCT n.tenant AS tenant, n.namespace AS ns`,
    );
    for (const r of res.records) {
      const tenant = String(r.get('tenant'));
      const ns = String(r.get('ns'));
      await this.db.write(
        'migrations.scopeTerms',
        `MATCH (n:Record) WHERE n.tenant = $tenant AND n.namespace = $ns AND n.scopeTerms IS NULL
         SET n.scopeTerms = $terms`,
        { tenant, ns, terms: scopeTerms(tenant, ns) },
      );
    }
    await this.db.write('migrations.record', `MERGE (m:Migration {id: 'backfill.scopeTerms'})`);
  }

  migrationsApplied(): Promise<boolean> {
    return migrationsApplied(this.db);
  }

  ping(): Promise<void> {
    return this.db.ping();
  }

  projection<T>(fn: (tx: ProjectionTx) => Promise<T>): Promise<T> {
    return this.db.writeTx('projector.apply', (tx) => fn(new Neo4jProjectionTx(tx)));
  }

  async checkpoints(topic: string): Promise<Checkpoint[]> {
    const res = await this.db.read(
      'checkpoints.list',
      'MATCH (c:Checkpoint {topic: $topic}) RETURN c.partition AS p, c.offset AS o ORDER BY p',
      {
        topic,
      },
    );
    return res.records.map((r) => ({ topic, partition: Number(r.get('p')), offset: String(r.get('o')) }));
  }

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
    return r ? toRecordView(r.get('n').properties, r.get('v').properties, r.get('about')) : undefined;
  }

  /** The structured filter of `records` and `recordCount`: one query text, so a count never disagrees. */
  recordFilter(scope: ReadScope, q: RecordQuery, asOf: AsOf, after: string | null) {
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
    const cypher = `MATCH (n:Record) WHERE ${SCOPE_WHERE} AND (n.namespace = $ns OR n.namespace STARTS WITH $ns + '/') AND n.id > $after
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

  async recordCount(scope: ReadScope, q: RecordQuery, asOf: AsOf): Promise<number> {
    const f = this.recordFilter(scope, q, asOf, null);
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
    const { cypher, params, current } = this.recordFilter(scope, q, asOf, after);
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

  async entityExists(tenant: string, id: string): Promise<boolean> {
    const res = await this.db.read(
      'entity.exists',
      'MATCH (e:Entity {tenant: $tenant, id: $id}) RETURN count(e) AS c',
      { tenant, id },
    );
    return Number(res.records[0]?.get('c') ?? 0) > 0;
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
      AND (n.namespace IN $chain OR n.namespace STARTS WITH $ns + '/')`;
    const ret = `RETURN n.id AS id, n.namespace AS namespace, n.sensitivity AS sensitivity, n.class AS class, n.subject AS subject, n.predicate AS predicate,
      n.object AS object, n.text AS text, n.status AS status, n.version AS version, n.confidence AS confidence`;
    const bySubject = await this.db.read(
      'relate.bySubject',
      `MATCH (n:Record {tenant: $tenant, subjectKey: $subjectKey}) WHERE ${where}
       WITH n ORDER BY n.createdAt DESC LIMIT toInteger($k) ${ret}, null AS score`,
      params,
    );
    // The ANN index answers before any WHERE: over-fetch, then keep what the scope allows.
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
      out.set(id, {
        id,
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
    }
    return [...out.values()];
  }

  relateCandidatesMany(
    scope: ReadScope,
    namespace: string,
    queries: readonly RelateQuery[],
    k: number,
  ): Promise<RelatedCandidate[][]> {
    return relateCandidatesMany(this.db, scope, namespace, queries, k);
  }

  entityFacts(scope: ReadScope, probes: readonly EntityProbe[]): Promise<EntityFacts[]> {
    return entityFacts(this.db, scope, probes);
  }

  async relations(
    scope: ReadScope,
    id: string,
  ): Promise<
    Array<{
      type: string;
      direction: 'OUT' | 'IN';
      otherId: string;
      confidence: number;
      reason: string | null;
    }>
  > {
    const res = await this.db.read(
      'record.relations',
      `MATCH (n:Record {tenant: $tenant, id: $id}) WHERE ${SCOPE_WHERE}
       MATCH (n)-[r:EXTENDS|CONTRADICTS|SUPERSEDES]-(o:Record) WHERE ${scopeWhere('o')}
       RETURN type(r) AS type, CASE WHEN startNode(r) = n THEN 'OUT' ELSE 'IN' END AS direction, o.id AS other,
              r.confidence AS confidence, r.reason AS reason
       ORDER BY type, other`,
      { ...scopeParams(scope), id },
    );
    return res.records.map((r) => ({
      type: String(r.get('type')),
      direction: r.get('direction') as 'OUT' | 'IN',
      otherId: String(r.get('other')),
      confidence: Number(r.get('confidence')),
      reason: optStr(r.get('reason')),
    }));
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

  async receiptsByPrefix(tenant: string, key: string): Promise<Receipt[]> {
    const res = await this.db.read(
      'receipts.byPrefix',
      `MATCH (r:Receipt {tenant: $tenant}) WHERE r.idempotencyKey = $key OR r.idempotencyKey STARTS WITH $prefix
       RETURN r ORDER BY r.idempotencyKey`,
      { tenant, key, prefix: `${key}#` },
    );
    return res.records.map((r) => toReceipt(r.get('r').properties));
  }

  async reviewQueue(
    scope: ReadScope,
    namespace: string,
    first: number,
    after: string | null,
  ): Promise<Page<Proposal>> {
    const res = await this.db.read(
      'review.queue',
      `MATCH (n:Record {tenant: $tenant, status: 'CANDIDATE'}) WHERE ${SCOPE_WHERE}
         AND (n.namespace = $ns OR n.namespace STARTS WITH $ns + '/')
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

  // ── recall arms ─────────────────────────────────────────────────────────────────────────────────

  private armParams(q: ArmQuery) {
    return {
      ...scopeParams(q.scope),
      ns: q.namespace,
      chain: namespaceChain(q.namespace),
      classes: q.classes,
      validAt: q.validAt,
      knownAt: q.knownAt,
      eot: END_OF_TIME,
      k: q.k,
    };
  }

  /**
   * Scope, namespace subtree-or-ancestor, visible status, class and validity: inside every arm's query.
   * Status and validity are the current ones, or — with $knownAt — those of the revision current then
   * (and records created after it do not exist yet).
   */
  private static readonly ARM_WHERE = `${SCOPE_WHERE}
    AND (n.namespace IN $chain OR n.namespace STARTS WITH $ns + '/')
    AND ($classes IS NULL OR n.class IN $classes)
    AND CASE WHEN $knownAt IS NULL
      THEN n.status IN ['ACTIVE', 'CONTESTED'] AND n.validFrom <= $validAt AND coalesce(n.validTo, $eot) > $validAt
      ELSE n.createdAt <= $knownAt AND EXISTS {
        MATCH (n)-[:HAS_REVISION]->(v:Revision)
        WHERE v.recordedAt <= $knownAt AND (v.retiredAt IS NULL OR v.retiredAt > $knownAt)
          AND v.status IN ['ACTIVE', 'CONTESTED'] AND v.validFrom <= $validAt AND coalesce(v.validTo, $eot) > $validAt }
    END`;

  /**
   * The request's records through the (tenant, namespace) index: its ancestors' and its subtree's, as two
   * index seeks (the planner would otherwise read the whole tenant for `IN $chain OR STARTS WITH`).
   */
  private static readonly SUBTREE = `CALL () {
      MATCH (n:Record) WHERE n.tenant = $tenant AND n.namespace IN $chain RETURN n
      UNION
      MATCH (n:Record) WHERE n.tenant = $tenant AND n.namespace STARTS WITH $ns + '/' RETURN n }`;

  /** Up to this many records under the request, arms score them all exactly instead of using an index. */
  static readonly EXACT_BELOW = 2000;
  /**
   * How long a namespace's record count is reused. The count only chooses each arm's strategy (an exact
   * scan or an index); both return the visible records the arm asks for, so a stale count costs time, never
   * correctness — and a warm recall saves the round trip.
   */
  static readonly SIZE_TTL_MS = 30_000;
  private readonly sizes = new Map<string, { at: number; count: Promise<number> }>();

  /** How many records the request covers, counted up to EXACT_BELOW + 1 (reused for SIZE_TTL_MS). */
  private subtreeSize(q: ArmQuery): Promise<number> {
    const key = `${q.scope.tenant}\u0000${q.namespace}`;
    const now = Date.now();
    const hit = this.sizes.get(key);
    if (hit && now - hit.at < Neo4jGraphStore.SIZE_TTL_MS) return hit.count;
    const count = this.db
      .read('recall.size', `${Neo4jGraphStore.SUBTREE} WITH n LIMIT toInteger($cap) RETURN count(n) AS c`, {
        ...this.armParams(q),
        cap: Neo4jGraphStore.EXACT_BELOW + 1,
      })
      .then((r) => Number(r.records[0]?.get('c') ?? 0));
    count.catch(() => this.sizes.delete(key));
    this.sizes.delete(key); // re-inserted last: the map stays in age order
    this.sizes.set(key, { at: now, count });
    if (this.sizes.size > 10_000) this.sizes.delete(this.sizes.keys().next().value!);
    return count;
  }

  async lexicalArm(q: ArmQuery, text: string, fetch: number): Promise<LexicalCandidate[]> {
    const terms = [...new Set(lexicalTerms(text))];
    if (terms.length === 0) return [];
    // A small request scope: read its visible records whose text, subject or turn context contains a
    // query term, all of them. Ranking is word-level in the service (src/recall/lexical.ts).
    if ((await this.subtreeSize(q)) <= Neo4jGraphStore.EXACT_BELOW) {
      const res = await this.db.read(
        'recall.lexicalScan',
        `${Neo4jGraphStore.SUBTREE}
         WITH n WHERE ${Neo4jGraphStore.ARM_WHERE}
         WITH n, CASE WHEN $knownAt IS NULL THEN n {.subject, .text} ELSE COLLECT {
           MATCH (n)-[:HAS_REVISION]->(v:Revision)
           WHERE v.recordedAt <= $knownAt AND (v.retiredAt IS NULL OR v.retiredAt > $knownAt)
           RETURN v {.subject, .text} }[0] END AS s
         WITH n, s, toLower(s.subject + ' ' + s.text + ' ' + coalesce(n.context, '')) AS doc
         WHERE any(t IN $terms WHERE doc CONTAINS t)
         RETURN n.id AS id, s.subject AS subject, s.text AS text, n.context AS context, n.validFrom AS validFrom
         ORDER BY id`,
        { ...this.armParams(q), terms },
      );
      return res.records.map((r) => lexicalCandidate(r.toObject()));
    }
    return this.lexicalIndexed(q, text, fetch);
  }

  private async lexicalIndexed(q: ArmQuery, text: string, fetch: number): Promise<LexicalCandidate[]> {
    const words = luceneQuery(text);
    if (!words) return [];
    if (q.knownAt !== null) return this.lexicalAsOf(q, words, fetch);
    // The scope terms make Lucene match only records in the request's namespaces of this tenant; the
    // WHERE still applies entitlement. Ranking happens in the recall service with statistics over these
    // (visible) candidates only. Lucene keeps only its best `window` hits (a bounded top-N instead of
    // sorting every match: a whole tenant has tens of thousands); when fewer than `fetch` of them are
    // visible and Lucene had more, the window grows, so the result is the best `fetch` visible matches.
    const lucene = `+${scopeClause(q.scope.tenant, q.namespace)} +(${words})`;
    for (let window = fetch * 2; ; window *= 8) {
      const res = await this.db.read(
        'recall.lexical',
        `CALL db.index.fulltext.queryNodes('record_search', $lucene, {limit: toInteger($window)}) YIELD node
         WITH collect(node) AS hits
         CALL (hits) {
           UNWIND hits AS n
           WITH n WHERE ${Neo4jGraphStore.ARM_WHERE}
           WITH n LIMIT toInteger($fetch)
           RETURN collect(n {.id, .subject, .text, .context, .validFrom}) AS visible
         }
         RETURN size(hits) AS matched, visible`,
        { ...this.armParams(q), lucene, window, fetch },
      );
      const matched = Number(res.records[0]?.get('matched') ?? 0);
      const visible = (res.records[0]?.get('visible') ?? []) as Array<Record<string, unknown>>;
      if (visible.length >= fetch || matched < window || window >= Neo4jGraphStore.LEXICAL_WINDOW_MAX)
        return visible.map(lexicalCandidate);
    }
  }

  /** Lucene's window for the lexical arm stops growing here (past it, the arm keeps what it found). */
  static readonly LEXICAL_WINDOW_MAX = 1_000_000;

  /** As known at a past time, the text searched is the text each record had then (its revisions). */
  private async lexicalAsOf(q: ArmQuery, words: string, fetch: number): Promise<LexicalCandidate[]> {
    const res = await this.db.read(
      'recall.lexicalAsOf',
      `CALL db.index.fulltext.queryNodes('revision_text', $words) YIELD node AS v, score
       WHERE v.tenant = $tenant AND v.recordedAt <= $knownAt AND (v.retiredAt IS NULL OR v.retiredAt > $knownAt)
       MATCH (n:Record {tenant: $tenant, id: v.recordId}) WHERE ${Neo4jGraphStore.ARM_WHERE}
       RETURN n.id AS id, v.subject AS subject, v.text AS text, n.context AS context, n.validFrom AS validFrom
       ORDER BY score DESC, id LIMIT toInteger($fetch)`,
      { ...this.armParams(q), words, fetch },
    );
    return res.records.map((r) => lexicalCandidate(r.toObject()));
  }

  /** The vector arm's ANN over-fetch stops growing here; past it, the exact scan over the request is cheaper. */
  static readonly ANN_FETCH_MAX = 10_000;

  async vectorArm(q: ArmQuery, vector: readonly number[]): Promise<string[]> {
    // A small request scope is scored exactly through the namespace index (the ANN index cannot fill k
    // there: its nearest neighbours are elsewhere). A large one asks the ANN index for 4k neighbours (its
    // cost grows with the fetch: a whole tenant fills k from them); when fewer than k of them are visible,
    // once more with twice the fetch that share says fills k, and only then the exact scan.
    const params = { ...this.armParams(q), vector: [...vector] };
    const exact = async () =>
      (
        await this.db.read(
          'recall.vectorExact',
          `${Neo4jGraphStore.SUBTREE}
           WITH n WHERE ${Neo4jGraphStore.ARM_WHERE} AND n.embedding IS NOT NULL
           WITH n, vector.similarity.cosine(n.embedding, $vector) AS score
           RETURN n.id AS id ORDER BY score DESC, id LIMIT toInteger($k)`,
          params,
        )
      ).records.map((r) => String(r.get('id')));
    if ((await this.subtreeSize(q)) <= Neo4jGraphStore.EXACT_BELOW) return exact();
    let fetch = Math.max(4 * q.k, 200);
    for (let attempt = 0; attempt < 2 && fetch <= Neo4jGraphStore.ANN_FETCH_MAX; attempt++) {
      const ann = await this.db.read(
        'recall.vector',
        `CALL db.index.vector.queryNodes('record_embedding', toInteger($fetch), $vector) YIELD node AS n, score
         WHERE ${Neo4jGraphStore.ARM_WHERE}
         RETURN n.id AS id ORDER BY score DESC, id LIMIT toInteger($k)`,
        { ...params, fetch },
      );
      if (ann.records.length >= q.k) return ann.records.map((r) => String(r.get('id')));
      if (ann.records.length === 0) break;
      fetch = Math.ceil((2 * q.k * fetch) / ann.records.length);
    }
    return exact();
  }

  async graphArm(q: ArmQuery, anchorIds: readonly string[]): Promise<Array<[string, string]>> {
    if (anchorIds.length === 0) return [];
    // A small request scope starts from its records (the anchors may be about thousands elsewhere); a
    // large one from the anchors. Same filter, same order.
    const small = (await this.subtreeSize(q)) <= Neo4jGraphStore.EXACT_BELOW;
    const res = await this.db.read(
      small ? 'recall.graphScan' : 'recall.graph',
      `${
        small
          ? `${Neo4jGraphStore.SUBTREE}
             WITH n WHERE ${Neo4jGraphStore.ARM_WHERE}
             MATCH (n)-[:ABOUT]->(e:Entity)-[:SAME_AS*0..1]-(a:Entity)
             WHERE a.tenant = $tenant AND a.id IN $anchors`
          : `MATCH (a:Entity {tenant: $tenant}) WHERE a.id IN $anchors
             MATCH (a)-[:SAME_AS*0..1]-(e:Entity)<-[:ABOUT]-(n:Record)
             WHERE ${Neo4jGraphStore.ARM_WHERE}`
      }
       WITH n, min(CASE WHEN e = a THEN 0 ELSE 1 END) AS hops, head(collect(a.id)) AS anchor
       RETURN n.id AS id, anchor ORDER BY hops, n.confidence DESC, id LIMIT toInteger($k)`,
      { ...this.armParams(q), anchors: [...anchorIds] },
    );
    return res.records.map((r) => [String(r.get('id')), String(r.get('anchor'))]);
  }

  async entitiesNamed(scope: ReadScope, phrases: readonly string[], limit: number): Promise<string[]> {
    if (phrases.length === 0) return [];
    const res = await this.db.read(
      'recall.anchors',
      `MATCH (e:Entity {tenant: $tenant})
       WHERE (toLower(e.name) IN $phrases OR any(a IN e.aliases WHERE a IN $phrases)) AND ${entityVisible('e')}
       RETURN e.id AS id ORDER BY size(e.name) DESC, id LIMIT toInteger($limit)`,
      { ...scopeParams(scope), phrases: [...phrases], limit },
    );
    return res.records.map((r) => String(r.get('id')));
  }

  async scopeArm(q: ArmQuery): Promise<string[]> {
    const ancestors = namespaceChain(q.namespace).slice(1);
    if (ancestors.length === 0) return [];
    const res = await this.db.read(
      'recall.scope',
      `MATCH (n:Record) USING INDEX n:Record(tenant, namespace)
       WHERE n.tenant = $tenant AND n.namespace IN $ancestors AND ${Neo4jGraphStore.ARM_WHERE}
         AND n.class IN ['CONSTRAINT', 'NORMATIVE', 'PROCEDURE', 'PREFERENCE', 'DECISION']
       RETURN n.id AS id ORDER BY size(n.namespace) DESC, n.confidence DESC, id LIMIT toInteger($k)`,
      { ...this.armParams(q), ancestors },
    );
    return res.records.map((r) => String(r.get('id')));
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
       // Without the embedding: ~3 KB a record that ranking does not read.
       RETURN n {.*, embedding: null} AS n, v, about, COLLECT {
         MATCH (n)-[c:CONTRADICTS]-(o:Record) WHERE ${scopeWhere('o')} AND ($knownAt IS NULL OR c.recordedAt <= $knownAt)
         RETURN o.id } AS contradicts`,
      { ...scopeParams(scope), ids: [...ids], knownAt },
    );
    return res.records.map((r) => ({
      ...toRecordView(r.get('n') as Props, r.get('v')?.properties ?? null, r.get('about')),
      contradicts: r.get('contradicts') as string[],
    }));
  }

  async grant(tenant: string, id: string): Promise<GrantState | undefined> {
    const res = await this.db.read('grant.get', 'MATCH (g:Grant {tenant: $tenant, id: $id}) RETURN g', {
      tenant,
      id,
    });
    const r = res.records[0];
    return r ? toGrant(r.get('g').properties) : undefined;
  }

  async grants(tenant: string): Promise<GrantState[]> {
    const res = await this.db.read(
      'grants.list',
      'MATCH (g:Grant {tenant: $tenant}) RETURN g ORDER BY g.grantedAt DESC, g.id',
      { tenant },
    );
    return res.records.map((r) => toGrant(r.get('g').properties));
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

  async isTestDatabase(): Promise<boolean> {
    const res = await this.db.read('marker.test', 'MATCH (m:TestDatabase {id: 1}) RETURN count(m) AS c');
    return Number(res.records[0]?.get('c') ?? 0) > 0;
  }

  async markTestDatabase(marked: boolean): Promise<void> {
    await this.db.write(
      'marker.mark',
      marked ? 'MERGE (m:TestDatabase {id: 1})' : 'MATCH (m:TestDatabase {id: 1}) DELETE m',
    );
  }

  async stateHash(): Promise<{ hash: string; nodes: number; relationships: number }> {
    // Canonical dump: every domain node as label + sorted properties, every relationship between domain
    // nodes as (start key, type, end key, properties); both sorted, then hashed. Checkpoints and
    // migration bookkeeping are not domain state.
    const nodes = await this.db.read(
      'state.nodes',
      `MATCH (n) WHERE n:Record OR n:Revision OR n:Entity OR n:Receipt OR n:Episode OR n:Chunk OR n:Grant
         OR n:Hold
       RETURN labels(n) AS l, properties(n) AS p`,
    );
    const rels = await this.db.read(
      'state.rels',
      `MATCH (a)-[r]->(b)
       WHERE (a:Record OR a:Revision OR a:Entity OR a:Episode OR a:Chunk)
         AND (b:Record OR b:Revision OR b:Entity OR b:Episode OR b:Chunk)
       RETURN labels(a) AS la, a.tenant AS ta, ${NODE_KEY('a')} AS ka, type(r) AS t, properties(r) AS p,
              labels(b) AS lb, b.tenant AS tb, ${NODE_KEY('b')} AS kb`,
    );
    const lines = [
      ...nodes.records.map((r) => 'N' + canonicalJson({ l: [...r.get('l')].sort(), p: r.get('p') })),
      ...rels.records.map(
        (r) =>
          'R' +
          canonicalJson({
            a: [r.get('la'), r.get('ta'), r.get('ka')],
            t: r.get('t'),
            p: r.get('p'),
            b: [r.get('lb'), r.get('tb'), r.get('kb')],
          }),
      ),
    ].sort();
    return {
      hash: sha256Hex(lines.join('\n')),
      nodes: nodes.records.length,
      relationships: rels.records.length,
    };
  }

  async wipe(): Promise<void> {
    for (;;) {
      const res = await this.db.write(
        'state.wipe',
        `MATCH (n) WHERE n:Record OR n:Revision OR n:Entity OR n:Receipt OR n:Checkpoint OR n:Episode OR n:Chunk
           OR n:Grant OR n:Hold
         WITH n LIMIT 10000 DETACH DELETE n RETURN count(*) AS c`,
      );
      if (Number(res.records[0]?.get('c') ?? 0) === 0) return;
    }
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

class Neo4jProjectionTx implements ProjectionTx {
  constructor(private readonly tx: Tx) {}

  async lockCheckpoint(topic: string, partition: number): Promise<bigint> {
    // The SET takes the node's write lock: a second projector on the same partition waits here and then
    // reads the committed offset, so redelivered messages are skipped rather than applied twice.
    const res = await this.tx.run(
      `MERGE (c:Checkpoint {topic: $topic, partition: $partition})
       ON CREATE SET c.offset = -1
       SET c.offset = c.offset
       RETURN c.offset AS o`,
      { topic, partition },
    );
    return BigInt(res.records[0]!.get('o') as number);
  }

  async setCheckpoint(topic: string, partition: number, offset: bigint): Promise<void> {
    await this.tx.run(
      `MATCH (c:Checkpoint {topic: $topic, partition: $partition})
       SET c.offset = CASE WHEN c.offset < $offset THEN $offset ELSE c.offset END`,
      { topic, partition, offset: Number(offset) },
    );
  }

  async load(keys: StateKeys): Promise<LoadedState> {
    const run = (cypher: string, rows: readonly object[]) =>
      rows.length ? this.tx.run(cypher, { keys: rows }) : null;
    const [records, entities, receipts, episodes, grants, holds] = await Promise.all([
      run(
        `UNWIND $keys AS k MATCH (n:Record {tenant: k.tenant, id: k.id})
         RETURN n,
           COLLECT { MATCH (n)-[:HAS_REVISION]->(v:Revision) RETURN v ORDER BY v.version } AS vs,
           COLLECT { MATCH (n)-[r:EXTENDS|CONTRADICTS|SUPERSEDES]->(t:Record)
                     RETURN {type: type(r), target: t.id, props: properties(r)} AS rel ORDER BY rel.props.eventId } AS rels`,
        keys.records,
      ),
      run(
        `UNWIND $keys AS k MATCH (e:Entity {tenant: k.tenant, id: k.id})
         OPTIONAL MATCH (e)-[s:SAME_AS]->(o:Entity) RETURN e, o.id AS sameAs, s.confidence AS sameAsConfidence`,
        keys.entities,
      ),
      run(
        'UNWIND $keys AS k MATCH (r:Receipt {tenant: k.tenant, idempotencyKey: k.idempotencyKey}) RETURN r',
        keys.receipts,
      ),
      run('UNWIND $keys AS k MATCH (ep:Episode {tenant: k.tenant, id: k.id}) RETURN ep', keys.episodes),
      run('UNWIND $keys AS k MATCH (g:Grant {tenant: k.tenant, id: k.id}) RETURN g', keys.grants ?? []),
      run('UNWIND $keys AS k MATCH (h:Hold {tenant: k.tenant, id: k.id}) RETURN h', keys.holds ?? []),
    ]);
    return {
      records: records?.records.map(toRecordState) ?? [],
      entities:
        entities?.records.map((r) =>
          toEntity(
            r.get('e').properties,
            r.get('sameAs')
              ? { entityId: String(r.get('sameAs')), confidence: Number(r.get('sameAsConfidence')) }
              : null,
          ),
        ) ?? [],
      receipts: receipts?.records.map((r) => toReceipt(r.get('r').properties)) ?? [],
      episodes: episodes?.records.map((r) => toEpisode(r.get('ep').properties)) ?? [],
      grants: grants?.records.map((r) => toGrant(r.get('g').properties)) ?? [],
      holds: holds?.records.map((r) => toHold(r.get('h').properties as Props)) ?? [],
    };
  }

  async write(w: ProjectionWrite): Promise<void> {
    const erasedRecords = (w.erasures ?? []).filter((x) => x.target === 'RECORD');
    if (erasedRecords.length) {
      // Before this batch's receipts are written: those of earlier batches may quote the erased content.
      await this.tx.run(
        `UNWIND $rows AS x MATCH (rc:Receipt {tenant: x.tenant, recordId: x.id})
         WHERE rc.reason IS NOT NULL SET rc.reason = null`,
        { rows: erasedRecords.map((x) => ({ tenant: x.tenant, id: x.id })) },
      );
    }
    if (w.episodes.length) {
      await this.tx.run(
        `UNWIND $rows AS e MERGE (ep:Episode {tenant: e.tenant, id: e.id}) SET ep += e.props
         WITH ep, e UNWIND e.chunks AS c
         MERGE (ch:Chunk {tenant: e.tenant, episodeId: e.id, index: c.index})
         SET ch.start = c.start, ch.end = c.end, ch.text = substring(e.props.text, c.start, c.end - c.start)
         MERGE (ch)-[:PART_OF]->(ep)`,
        { rows: w.episodes.map(episodeRow) },
      );
    }
    if (w.entities.length) {
      await this.tx.run(
        `UNWIND $rows AS e MERGE (n:Entity {tenant: e.tenant, id: e.id})
         SET n.name = e.name, n.type = e.type, n.aliases = e.aliases, n.externalIds = e.externalIds,
             n.embedding = e.embedding, n.embeddingModel = e.embeddingModel
         WITH n, e WHERE e.sameAs IS NOT NULL
         MATCH (o:Entity {tenant: e.tenant, id: e.sameAs.entityId})
         MERGE (n)-[s:SAME_AS]->(o) SET s.confidence = e.sameAs.confidence, s.tentative = true`,
        {
          rows: w.entities.map((e) => ({
            tenant: e.tenant,
            id: e.id,
            name: e.name,
            type: e.type,
            aliases: [...e.aliases],
            externalIds: [...e.externalIds],
            embedding: e.embedding?.vector ?? null,
            embeddingModel: e.embedding?.modelId ?? null,
            sameAs: e.sameAs,
          })),
        },
      );
    }
    if (w.records.length) {
      await this.tx.run(
        `UNWIND $rows AS r
         MERGE (n:Record {tenant: r.tenant, id: r.id})
         SET n += r.props
         WITH n, r
         UNWIND r.revisions AS rv
         MERGE (v:Revision {tenant: r.tenant, recordId: r.id, version: rv.version})
         SET v += rv
         MERGE (n)-[:HAS_REVISION]->(v)
         WITH DISTINCT n, r
         CALL (n, r) {
           UNWIND r.about AS eid
           MATCH (e:Entity {tenant: r.tenant, id: eid})
           MERGE (n)-[:ABOUT]->(e)
         }
         WITH n, r WHERE r.props.episodeId IS NOT NULL
         MATCH (ep:Episode {tenant: r.tenant, id: r.props.episodeId})
         MERGE (n)-[:DERIVED_FROM]->(ep)`,
        { rows: w.records.map(recordRow) },
      );
      // Relationship types cannot be parameters: one statement per allow-listed type.
      for (const type of RELATION_TYPES) {
        const rows = w.records.flatMap((r) =>
          r.relations
            .filter((x) => x.type === type)
            .map((x) => ({ tenant: r.tenant, id: r.id, target: x.target, props: relationProps(x) })),
        );
        if (!rows.length) continue;
        await this.tx.run(
          `UNWIND $rows AS x
           MATCH (a:Record {tenant: x.tenant, id: x.id}), (b:Record {tenant: x.tenant, id: x.target})
           MERGE (a)-[rel:${relType(type)}]->(b) SET rel += x.props`,
          { rows },
        );
      }
    }
    if (w.holds?.length) {
      await this.tx.run(`UNWIND $rows AS h MERGE (n:Hold {tenant: h.tenant, id: h.id}) SET n += h`, {
        rows: w.holds.map((h) => ({ ...h })),
      });
    }
    if (w.grants.length) {
      await this.tx.run(`UNWIND $rows AS g MERGE (n:Grant {tenant: g.tenant, id: g.id}) SET n += g`, {
        rows: w.grants.map((g) => ({ ...g, purposes: g.purposes ? [...g.purposes] : null })),
      });
    }
    if (w.receipts.length) {
      await this.tx.run(
        `UNWIND $rows AS r MERGE (n:Receipt {tenant: r.tenant, idempotencyKey: r.idempotencyKey}) SET n += r`,
        { rows: w.receipts.map((r) => ({ ...r })) },
      );
    }
  }
}

const RELATION_TYPES = ['EXTENDS', 'CONTRADICTS', 'SUPERSEDES'] as const;

const relationProps = (x: RelationState) => ({
  confidence: x.confidence,
  reason: x.reason,
  eventId: x.eventId,
  recordedAt: x.recordedAt,
});

function episodeRow(e: EpisodeState) {
  return {
    tenant: e.tenant,
    id: e.id,
    chunks: e.chunks.map((c) => ({ ...c })),
    props: {
      namespace: e.namespace,
      source: e.source,
      occurredAt: e.occurredAt,
      text: e.text,
      turnsJson: canonicalJson(e.turns),
      chunksJson: canonicalJson(e.chunks),
      sensitivity: e.sensitivity,
      secretRefsJson: canonicalJson(e.secretRefs),
      flags: [...e.flags],
      recordedAt: e.recordedAt,
    },
  };
}

function toEpisode(p: Props): EpisodeState {
  return {
    tenant: str(p['tenant']),
    id: str(p['id']),
    namespace: str(p['namespace']),
    source: str(p['source']),
    occurredAt: str(p['occurredAt']),
    text: str(p['text']),
    turns: JSON.parse(str(p['turnsJson'])) as EpisodeState['turns'],
    chunks: JSON.parse(str(p['chunksJson'])) as EpisodeState['chunks'],
    sensitivity: p['sensitivity'] as EpisodeState['sensitivity'],
    secretRefs: JSON.parse(str(p['secretRefsJson'])) as EpisodeState['secretRefs'],
    flags: (p['flags'] as string[] | undefined) ?? [],
    recordedAt: str(p['recordedAt']),
  };
}

/** RecordState → the Record node's properties (current revision denormalized) and its revisions. */
function recordRow(r: RecordState) {
  const cur = currentRevision(r);
  return {
    tenant: r.tenant,
    id: r.id,
    about: [...r.about],
    props: {
      namespace: r.namespace,
      class: r.class,
      sensitivity: r.sensitivity,
      confidence: r.confidence,
      timeSource: r.timeSource,
      rationale: r.rationale,
      sourcesJson: canonicalJson(r.sources),
      extJson: canonicalJson(r.ext),
      createdAt: r.createdAt,
      proposedBy: r.proposedBy,
      proposedVia: [...r.proposedVia],
      approvalsJson: canonicalJson(r.approvals),
      approvedAt: r.approvedAt,
      approvedBy: r.approvedAt ? r.approvals.map((a) => a.by) : [],
      aboutIds: [...r.about],
      status: cur.status,
      version: cur.version,
      subject: cur.statement.subject,
      predicate: cur.statement.predicate,
      object: cur.statement.object,
      text: cur.statement.text,
      validFrom: cur.validFrom,
      validTo: cur.validTo,
      recordedAt: cur.recordedAt,
      changesetId: cur.changesetId,
      subjectKey: cur.statement.subject.trim().toLowerCase(),
      reviewReasons: [...r.reviewReasons],
      flags: [...r.flags],
      embedding: r.embedding?.vector ?? null,
      embeddingModel: r.embedding?.modelId ?? null,
      episodeId: r.episodeId,
      context: typeof r.ext[TURN_CONTEXT_EXT] === 'string' ? r.ext[TURN_CONTEXT_EXT] : null,
      scopeTerms: scopeTerms(r.tenant, r.namespace),
      reinforcements: r.reinforcements,
      feedbackUsed: r.feedback.used,
      feedbackIgnored: r.feedback.ignored,
      feedbackWrong: r.feedback.wrong,
      utility: utilityOf(r.feedback),
      feedbackVotesJson: canonicalJson(r.votes),
    },
    revisions: r.revisions.map((v) => ({
      version: v.version,
      subject: v.statement.subject,
      predicate: v.statement.predicate,
      object: v.statement.object,
      text: v.statement.text,
      status: v.status,
      validFrom: v.validFrom,
      validTo: v.validTo,
      recordedAt: v.recordedAt,
      retiredAt: v.retiredAt,
      changesetId: v.changesetId,
      eventId: v.eventId,
      reason: v.reason,
    })),
  };
}

type Props = Record<string, unknown>;
const str = (v: unknown): string => String(v);
const optStr = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);
/** Records projected before approvals were kept have none. */
const approvalsOf = (n: Props): Approval[] =>
  n['approvalsJson'] ? (JSON.parse(str(n['approvalsJson'])) as Approval[]) : [];

function toRecordState(row: Neo4jRecord): RecordState {
  const n = row.get('n').properties as Props;
  const vs = (row.get('vs') as Array<{ properties: Props }>).map((v) => v.properties);
  const revisions: RevisionState[] = vs.map((v) => ({
    version: Number(v['version']),
    statement: {
      subject: str(v['subject']),
      predicate: str(v['predicate']),
      object: str(v['object']),
      text: str(v['text']),
    },
    status: v['status'] as RevisionState['status'],
    validFrom: str(v['validFrom']),
    validTo: optStr(v['validTo']),
    recordedAt: str(v['recordedAt']),
    retiredAt: optStr(v['retiredAt']),
    changesetId: optStr(v['changesetId']),
    eventId: str(v['eventId']),
    reason: optStr(v['reason']),
  }));
  return {
    tenant: str(n['tenant']),
    id: str(n['id']),
    namespace: str(n['namespace']),
    class: n['class'] as RecordState['class'],
    sensitivity: n['sensitivity'] as RecordState['sensitivity'],
    confidence: Number(n['confidence']),
    timeSource: n['timeSource'] as RecordState['timeSource'],
    rationale: optStr(n['rationale']),
    about: (n['aboutIds'] as string[] | undefined) ?? [],
    sources: JSON.parse(str(n['sourcesJson'])) as RecordState['sources'],
    ext: JSON.parse(str(n['extJson'])) as RecordState['ext'],
    createdAt: str(n['createdAt']),
    proposedBy: str(n['proposedBy']),
    proposedVia: strings(n['proposedVia']),
    approvals: approvalsOf(n),
    approvedAt: optStr(n['approvedAt']),
    revisions,
    relations: (row.get('rels') as Array<{ type: string; target: string; props: Props }>).map((x) => ({
      type: x.type as RelationState['type'],
      target: x.target,
      confidence: Number(x.props['confidence']),
      reason: str(x.props['reason']),
      eventId: str(x.props['eventId']),
      recordedAt: str(x.props['recordedAt']),
    })),
    reviewReasons: (n['reviewReasons'] as string[] | undefined) ?? [],
    flags: (n['flags'] as string[] | undefined) ?? [],
    embedding: n['embedding']
      ? { modelId: str(n['embeddingModel']), vector: (n['embedding'] as number[]).map(Number) }
      : null,
    episodeId: optStr(n['episodeId']),
    reinforcements: Number(n['reinforcements'] ?? 0),
    feedback: {
      used: Number(n['feedbackUsed'] ?? 0),
      ignored: Number(n['feedbackIgnored'] ?? 0),
      wrong: Number(n['feedbackWrong'] ?? 0),
    },
    // Projected before votes were kept: the counts stay, with no caller to replace.
    votes: n['feedbackVotesJson'] ? (JSON.parse(str(n['feedbackVotesJson'])) as RecordState['votes']) : {},
  };
}

function toHold(p: Props): HoldState {
  return {
    tenant: str(p['tenant']),
    id: str(p['id']),
    target: p['target'] as HoldState['target'],
    namespace: str(p['namespace']),
    recordId: optStr(p['recordId']),
    reason: str(p['reason']),
    placedBy: str(p['placedBy']),
    placedAt: str(p['placedAt']),
    releasedAt: optStr(p['releasedAt']),
    releasedBy: optStr(p['releasedBy']),
    releaseReason: optStr(p['releaseReason']),
  };
}

function toGrant(p: Props): GrantState {
  return {
    tenant: str(p['tenant']),
    id: str(p['id']),
    grantee: str(p['grantee']),
    namespace: str(p['namespace']),
    maxSensitivity: p['maxSensitivity'] as Sensitivity,
    purposes: (p['purposes'] as string[] | null | undefined) ?? null,
    grantedBy: str(p['grantedBy']),
    grantedAt: str(p['grantedAt']),
    revokedAt: optStr(p['revokedAt']),
    revokeReason: optStr(p['revokeReason']),
  };
}

function toRecordView(n: Props, v: Props | null, about: string[]): RecordView {
  const cur = v ?? n;
  return {
    tenant: str(n['tenant']),
    id: str(n['id']),
    namespace: str(n['namespace']),
    class: n['class'] as RecordView['class'],
    status: cur['status'] as RecordView['status'],
    version: Number(cur['version']),
    subject: str(cur['subject']),
    predicate: str(cur['predicate']),
    object: str(cur['object']),
    text: str(cur['text']),
    sensitivity: n['sensitivity'] as RecordView['sensitivity'],
    confidence: Number(n['confidence']),
    validFrom: str(cur['validFrom']),
    validTo: optStr(cur['validTo']),
    timeSource: str(n['timeSource']),
    recordedAt: str(cur['recordedAt']),
    retiredAt: v ? optStr(v['retiredAt']) : null,
    createdAt: str(n['createdAt']),
    changesetId: optStr(cur['changesetId']),
    rationale: optStr(n['rationale']),
    about: [...about].sort(),
    sourcesJson: str(n['sourcesJson']),
    extJson: str(n['extJson']),
    proposedBy: str(n['proposedBy']),
    proposedVia: strings(n['proposedVia']),
    approvals: approvalsOf(n),
    approvedAt: optStr(n['approvedAt']),
    reviewReasons: (n['reviewReasons'] as string[] | undefined) ?? [],
    flags: (n['flags'] as string[] | undefined) ?? [],
    reinforcements: Number(n['reinforcements'] ?? 0),
    utility: Number(n['utility'] ?? 0),
  };
}

export function toRevisionView(v: Props): RevisionView {
  return {
    version: Number(v['version']),
    subject: str(v['subject']),
    predicate: str(v['predicate']),
    object: str(v['object']),
    text: str(v['text']),
    status: v['status'] as RevisionView['status'],
    validFrom: str(v['validFrom']),
    validTo: optStr(v['validTo']),
    recordedAt: str(v['recordedAt']),
    retiredAt: optStr(v['retiredAt']),
    changesetId: optStr(v['changesetId']),
    reason: optStr(v['reason']),
  };
}

export function toEntity(p: Props, sameAs: EntityState['sameAs'] = null): EntityState {
  return {
    tenant: str(p['tenant']),
    id: str(p['id']),
    name: str(p['name']),
    type: optStr(p['type']),
    aliases: (p['aliases'] as string[] | undefined) ?? [],
    externalIds: (p['externalIds'] as string[] | undefined) ?? [],
    sameAs,
    embedding: p['embedding']
      ? { modelId: str(p['embeddingModel']), vector: (p['embedding'] as number[]).map(Number) }
      : null,
  };
}

function toReceipt(p: Props): Receipt {
  return {
    tenant: str(p['tenant']),
    idempotencyKey: str(p['idempotencyKey']),
    commandHash: str(p['commandHash']),
    eventId: str(p['eventId']),
    outcome: p['outcome'] as Receipt['outcome'],
    recordId: optStr(p['recordId']),
    version: p['version'] === null || p['version'] === undefined ? null : Number(p['version']),
    reason: optStr(p['reason']),
    recordedAt: str(p['recordedAt']),
  };
}
