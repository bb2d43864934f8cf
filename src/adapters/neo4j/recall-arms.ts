import { searchKeys, type LexicalCandidate } from '../../domain/lexical-terms.ts';
import { namespaceChain } from '../../domain/model.ts';
import type { ArmQuery, RecallArms, ReadScope } from '../../ports/graph.ts';
import { STRUCTURAL_TYPES } from '../../domain/relations.ts';
import { relType, type Executor } from './executor.ts';
import { LexicalSearch } from './lexical-search.ts';
import { lexicalCandidate } from './mapping.ts';
import { Neo4jRecordReads } from './record-reads.ts';
import { VisibleShares } from './recent.ts';
import { AnchorOrders, mergedRanking } from './anchor-orders.ts';
import { HeldEntities } from './entity-held.ts';
import { firstVisible, RankedMemo } from './ranked-memo.ts';
import { ScopeVectors } from './scope-vectors.ts';
import { SubtreeSizes } from './subtree-size.ts';
import {
  ARM_WHERE,
  armParams,
  ENTITY_STAMP,
  entityVisible,
  namespaceKey,
  scopeParams,
  scopeWhere,
  SUBTREE,
} from './scope.ts';

/**
 * The anchors among the candidates (`$ids`, entity-held.ts): named by a phrase, visible, longest name
 * first; with the tenant's entity stamp as this statement saw it, so that candidates from an index held
 * in process can be checked for freshness in the same round trip.
 */
export const ANCHORS = `OPTIONAL MATCH (st:ScopeStamp {tenant: $tenant, namespace: $stamp})
       CALL () {
         UNWIND $ids AS cid
         MATCH (e:Entity {tenant: $tenant, id: cid}) USING INDEX SEEK e:Entity(tenant, id)
         WHERE (toLower(e.name) IN $phrases OR any(a IN e.aliases WHERE a IN $phrases)) AND ${entityVisible('e')}
         WITH e ORDER BY size(e.name) DESC, e.id LIMIT toInteger($limit)
         RETURN collect(e.id) AS ids
       }
       RETURN st.epoch AS epoch, st.seq AS seq, ids`;

/** Recall's candidate arms: ranked record ids, best first, every one filtered by the caller's scope (ARM_WHERE) before it is ranked. */
export class Neo4jRecallArms implements RecallArms {
  private readonly reads: Neo4jRecordReads;

  /** `memory`: the record vectors held in process, shared with ingest's relate lookup (graph-store.ts). */
  constructor(
    private readonly db: Executor,
    private readonly memory = new ScopeVectors(db, ScopeVectors.DEFAULT_HELD),
    opts: { lexicalUnscopedFrom?: number; entities?: HeldEntities } = {},
  ) {
    this.entities = opts.entities ?? new HeldEntities(db);
    this.reads = new Neo4jRecordReads(db);
    this.sizes = new SubtreeSizes(db);
    this.anchorOrders = new AnchorOrders(db, memory.settling);
    this.lexical = new LexicalSearch(db, opts.lexicalUnscopedFrom ?? Neo4jRecallArms.LEXICAL_UNSCOPED_FROM);
  }

  findEntity: RecallArms['findEntity'] = (scope, ref) => this.reads.findEntity(scope, ref);
  recordsByIds: RecallArms['recordsByIds'] = (scope, ids, knownAt) =>
    this.reads.recordsByIds(scope, ids, knownAt);

  /** At or below this many records under the request, the vector arm (no vectors held) scans them exactly. */
  static readonly EXACT_BELOW = 2000;
  /**
   * At or below this many records under the request, the lexical and graph arms scan them; above it they
   * ask the fulltext index and start from the anchors. Where the costs cross, measured as server time per
   * statement (2026-12-04): a scan reads every record of the scope, ~20 µs each for lexical and ~14 µs for
   * graph (19.6 and 13.3 ms at 921 records), while the indexed lexical query costs 0.5 ms at 20 records and
   * ~6–10 ms at 500–3,000, and the anchor-first walk 2.3–6.5 ms, growing with the anchors' records (a hub
   * about 2,981 records: 5.8 ms even for a 20-record scope). The graph arm's two paths give the same
   * answer (test/contract/graph-arm.test.ts); the lexical arm's match words differently (a substring scan,
   * the analysed index) and score alike on LoCoMo dev with every namespace on the index.
   */
  static readonly SCAN_BELOW = 200;
  /**
   * From this many records under the request (SubtreeSizes counts up to its cap, past it), the lexical arm
   * first asks Lucene for the words alone (lexical-search.ts): a scope this large is most of an index
   * that serves one large tenant, where requiring its scope term costs more than it narrows.
   */
  static readonly LEXICAL_UNSCOPED_FROM = 20_000;
  private readonly lexical: LexicalSearch;
  private readonly sizes: SubtreeSizes;
  /** The graph arm's orders of each anchor (graphRanked), and the scope arm's of each ancestor. */
  private readonly anchorOrders: AnchorOrders;
  private readonly scopeOrders = new RankedMemo<string>();
  /** The entity index held in process, shared with ingest's entity lookups (graph-store.ts). */
  private readonly entities: HeldEntities;

  /** How many records the request covers, counted up to SubtreeSizes.CAP (past every bound here). */
  private subtreeSize(q: ArmQuery): Promise<number> {
    return this.sizes.of(q.scope.tenant, q.namespace);
  }

  async lexicalArm(q: ArmQuery, text: string, fetch: number): Promise<LexicalCandidate[]> {
    const terms = searchKeys(text);
    if (terms.length === 0) return [];
    // A small request scope: read its visible records whose text, subject or turn context contains a
    // query term, all of them. Ranking is word-level in the service (src/recall/lexical.ts).
    if ((await this.subtreeSize(q)) <= Neo4jRecallArms.SCAN_BELOW) {
      const res = await this.db.read(
        'recall.lexicalScan',
        `${SUBTREE}
         WITH n WHERE ${ARM_WHERE}
         WITH n, CASE WHEN $knownAt IS NULL THEN n {.subject, .text} ELSE COLLECT {
           MATCH (n)-[:HAS_REVISION]->(v:Revision)
           WHERE v.recordedAt <= $knownAt AND (v.retiredAt IS NULL OR v.retiredAt > $knownAt)
           RETURN v {.subject, .text} }[0] END AS s
         WITH n, s, toLower(s.subject + ' ' + s.text + ' ' + coalesce(n.context, '')) AS doc
         WHERE any(t IN $terms WHERE doc CONTAINS t)
         RETURN n.id AS id, s.subject AS subject, s.text AS text, n.context AS context, n.validFrom AS validFrom
         ORDER BY id`,
        { ...armParams(q), terms },
      );
      return res.records.map((r) => lexicalCandidate(r.toObject()));
    }
    return this.lexical.search(q, text, fetch, await this.subtreeSize(q));
  }

  /** The vector arm's ANN over-fetch stops growing here; past it, the exact scan over the request is cheaper. */
  static readonly ANN_FETCH_MAX = 10_000;

  async vectorArm(q: ArmQuery, vector: readonly number[], modelId: string): Promise<string[]> {
    // A request scope of up to ScopeVectors.MAX_SCOPE records is ranked from its vectors held in process
    // (scope-vectors.ts). Without those, a small one is scored exactly through the namespace index (the
    // ANN index cannot fill k there: its nearest neighbours are elsewhere). A larger one asks the ANN index for 4k neighbours (its
    // cost grows with the fetch: a whole tenant fills k from them); when fewer than k of them are visible,
    // once more with twice the fetch that share says fills k, and only then the exact scan.
    // Only records embedded by the query's model: another model's cosine would rank noise.
    const params = { ...armParams(q), vector: [...vector], modelId };
    const exact = async () =>
      (
        await this.db.read(
          'recall.vectorExact',
          `${SUBTREE}
           WITH n WHERE ${ARM_WHERE} AND n.embedding IS NOT NULL AND n.embeddingModel = $modelId
           WITH n, vector.similarity.cosine(n.embedding, $vector) AS score
           RETURN n.id AS id ORDER BY score DESC, id LIMIT toInteger($k)`,
          params,
        )
      ).records.map((r) => String(r.get('id')));
    const size = await this.subtreeSize(q);
    if (this.memory.covers(size)) return this.memory.nearest(q, vector, modelId);
    if (size <= Neo4jRecallArms.EXACT_BELOW) return exact();
    let fetch = this.annFetch(q, modelId);
    for (let attempt = 0; attempt < 2 && fetch <= Neo4jRecallArms.ANN_FETCH_MAX; attempt++) {
      // The neighbours in order, then the arm filter on them in that order until k pass (a filter after a
      // sort streams, so LIMIT stops it): ~k records filtered instead of the whole fetch. `seen` is how far
      // down it went, so the visible share is k of `seen`, or all that passed of the whole fetch.
      const ann = await this.db.read(
        'recall.vector',
        `CALL db.index.vector.queryNodes('record_embedding', toInteger($fetch), $vector) YIELD node AS n, score
         WITH n, score ORDER BY score DESC, n.id
         WITH collect(n) AS hits
         CALL (hits) {
           UNWIND range(0, size(hits) - 1) AS i
           WITH hits[i] AS n, i WHERE ${ARM_WHERE} AND n.embeddingModel = $modelId
           WITH n.id AS id, i LIMIT toInteger($k)
           RETURN collect(id) AS ids, max(i) AS last
         }
         RETURN ids, CASE WHEN size(ids) >= $k THEN last + 1 ELSE size(hits) END AS seen`,
        { ...params, fetch },
      );
      const ids = (ann.records[0]?.get('ids') ?? []) as string[];
      const seen = Number(ann.records[0]?.get('seen') ?? 0);
      this.annShares.set(q, seen > 0 ? ids.length / seen : 0, modelId);
      if (ids.length >= q.k) return ids.map(String);
      // Fewer than k passed: the whole fetch was filtered, and `ids` is every visible neighbour in it.
      const visible = ids.length;
      if (visible === 0) break;
      fetch = Math.ceil((2 * q.k * fetch) / visible);
    }
    return exact();
  }

  /** Each caller scope's visible share of the ANN neighbours, reused to size its next fetch. */
  private readonly annShares = new VisibleShares();

  /**
   * The first ANN fetch: twice what the scope's last visible share says fills k (so a selective scope
   * asks once instead of twice), never below 4k or 200; none (the exact scan) when its last fetch saw
   * nothing. Like the size, a stale share costs time only: a short fetch is followed by a second one and
   * then the exact scan, exactly as without it.
   */
  private annFetch(q: ArmQuery, modelId: string): number {
    const k = q.k;
    const floor = Math.max(4 * k, 200);
    const share = this.annShares.get(q, modelId);
    if (share === undefined) return floor;
    return share <= 0 ? Infinity : Math.max(floor, Math.ceil((2 * k) / share));
  }

  async graphArm(q: ArmQuery, anchorIds: readonly string[]): Promise<Array<[string, string]>> {
    if (anchorIds.length === 0) return [];
    const params = { ...armParams(q), anchors: [...anchorIds] };
    // A small request scope starts from its records (the anchors may be about thousands elsewhere).
    if ((await this.subtreeSize(q)) <= Neo4jRecallArms.SCAN_BELOW) {
      const res = await this.db.read(
        'recall.graphScan',
        `${SUBTREE}
         WITH n WHERE ${ARM_WHERE}
         MATCH (n)-[:ABOUT]->(e:Entity)-[:SAME_AS*0..1]-(a:Entity)
         WHERE a.tenant = $tenant AND a.id IN $anchors
         WITH n, min(CASE WHEN e = a THEN 0 ELSE 1 END) AS hops, head(collect(a.id)) AS anchor
         RETURN n.id AS id, anchor ORDER BY hops, n.confidence DESC, id LIMIT toInteger($k)`,
        params,
      );
      return res.records.map((r) => [String(r.get('id')), String(r.get('anchor'))]);
    }
    return this.graphRanked(q, anchorIds);
  }

  /**
   * A large request starts from the anchors, which may be about thousands of records: each anchor's order
   * (by hops, then confidence, then id) across its tenant is held in process (anchor-orders.ts) while the
   * stamps of the request's namespaces and the tenant's SAME_AS stamp stand; the request's namespaces are
   * picked from it, and the arm filter runs on that a window at a time until k pass. A record's place
   * depends on itself alone, so an invisible one never moves a visible one: same ids, same order as
   * filtering first (test/contract/graph-arm.test.ts).
   */
  private async graphRanked(q: ArmQuery, anchorIds: readonly string[]): Promise<Array<[string, string]>> {
    const lists = await this.anchorOrders.of(q.scope.tenant, anchorIds, await this.memory.stampsFor(q));
    const chain = new Set(namespaceChain(q.namespace));
    const below = `${q.namespace}/`;
    const ranking = mergedRanking(lists, anchorIds, (ns) => chain.has(ns) || ns.startsWith(below));
    const anchorOf = new Map<string, string>();
    const ids = await firstVisible(this.db, 'recall.graphVisible', q, ranking.bound, (n) =>
      ranking.top(n).map(([id, anchor]) => (anchorOf.set(id, anchor), id)),
    );
    return ids.map((id) => [id, anchorOf.get(id)!]);
  }

  /** How far the relation walk goes from a seed record. */
  static readonly RELATED_HOPS = 2;

  async relatedArm(q: ArmQuery, seedIds: readonly string[]): Promise<Array<[string, string]>> {
    if (seedIds.length === 0) return [];
    // Every record on the path is one the caller may read (an invisible middle record would otherwise
    // be disclosed by what it connects), every edge a projected relation valid at $validAt (and known at
    // $knownAt); the record reached passes the arm's whole filter, so nothing is ranked before that.
    const res = await this.db.read(
      'recall.related',
      `UNWIND $seeds AS sid
       MATCH (s:Record {tenant: $tenant, id: sid})
       MATCH p = (s)-[:${STRUCTURAL_TYPES.map(relType).join('|')}*1..${Neo4jRecallArms.RELATED_HOPS}]-(n:Record)
       WHERE n <> s
         AND all(x IN nodes(p) WHERE x:Record AND ${scopeWhere('x')})
         AND all(r IN relationships(p) WHERE r.eventId IS NOT NULL
               AND coalesce(r.validFrom, '') <= $validAt AND coalesce(r.validTo, $eot) > $validAt
               AND ($knownAt IS NULL OR r.recordedAt <= $knownAt))
         AND ${ARM_WHERE}
       WITH n, sid, min(length(p)) AS hops ORDER BY hops, sid
       WITH n, collect(sid)[0] AS seed, min(hops) AS hops
       RETURN n.id AS id, seed ORDER BY hops, n.confidence DESC, id LIMIT toInteger($k)`,
      { ...armParams(q), seeds: [...seedIds] },
    );
    return res.records.map((r) => [String(r.get('id')), String(r.get('seed'))]);
  }

  /**
   * The visible entities named by a phrase (lower-cased name or alias), longest name first. The candidates
   * come from the tenant's entity index held in process (entity-held.ts: no scan of the tenant's
   * entities), and Neo4j reads them by id under the same predicate and the one entity filter. Recall
   * first tries the index it holds, as is: the statement also reads the tenant's entity stamp, and when
   * that is the index's, the index had every entity committed before the statement and the answer stands
   * (one round trip while no entity changed; bench:recall's anchors took a second one, 2–5 ms, before).
   * Otherwise the index is brought up to date (HeldEntities.of) and asked again.
   */
  async entitiesNamed(scope: ReadScope, phrases: readonly string[], limit: number): Promise<string[]> {
    if (phrases.length === 0) return [];
    const held = this.entities.held(scope.tenant);
    if (held) {
      const r = await this.anchors(scope, held.named(phrases), phrases, limit);
      if (r.epoch === held.epoch && r.seq <= held.seq) return r.ids;
    }
    const ids = (await this.entities.of(scope.tenant)).named(phrases);
    return ids.length === 0 ? [] : (await this.anchors(scope, ids, phrases, limit)).ids;
  }

  private async anchors(scope: ReadScope, ids: string[], phrases: readonly string[], limit: number) {
    const res = await this.db.read('recall.anchors', ANCHORS, {
      ...scopeParams(scope),
      ...{ stamp: ENTITY_STAMP, ids, phrases: [...phrases], limit },
    });
    const r = res.records[0];
    const seq = r?.get('seq') as unknown;
    return {
      epoch: r?.get('epoch') as string | null | undefined,
      seq: seq === null || seq === undefined ? Infinity : Number(seq),
      ids: ((r?.get('ids') as string[] | undefined) ?? []).map(String),
    };
  }

  /**
   * Records of the request's ancestors that bind it (norms, constraints, procedures, preferences,
   * decisions): nearest ancestor first, each one's by confidence, then id. Each ancestor's order is held
   * in process while its stamp stands (ranked-memo.ts); the arm filter then runs on the ancestors' orders
   * one after another, a window at a time, until k pass — as a per-ancestor filtered top k would.
   */
  async scopeArm(q: ArmQuery): Promise<string[]> {
    const ancestors = namespaceChain(q.namespace).slice(1);
    if (ancestors.length === 0) return [];
    const tenant = q.scope.tenant;
    const stamps = await this.memory.stampsFor(q);
    const orders = await Promise.all(
      ancestors.map((ns) => {
        const key = namespaceKey(tenant, ns);
        const own = stamps.filter((s) => s.key === key);
        return this.scopeOrders.get(
          key,
          own,
          async () =>
            ((
              await this.db.read(
                'recall.scopeOrder',
                `MATCH (n:Record) USING INDEX SEEK n:Record(tenant, namespace)
                 WHERE n.tenant = $tenant AND n.namespace = $ns
                   AND n.class IN ['CONSTRAINT', 'NORMATIVE', 'PROCEDURE', 'PREFERENCE', 'DECISION']
                 WITH n.id AS id, n.confidence AS confidence ORDER BY confidence DESC, id
                 RETURN collect(id) AS ranked`,
                { tenant, ns },
              )
            ).records[0]?.get('ranked') as string[] | undefined) ?? [],
          () => own.every((s) => this.memory.settling.settled(s)),
        );
      }),
    );
    const ranked = orders.flat();
    return firstVisible(this.db, 'recall.scopeVisible', q, ranked.length, (n) => ranked.slice(0, n));
  }
}
