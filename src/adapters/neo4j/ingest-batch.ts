import type { Record as Neo4jRecord } from 'neo4j-driver';
import { namespaceChain, type RecordClass, type RecordStatus, type Sensitivity } from '../../domain/model.ts';
import type { ReadScope } from '../../domain/policy.ts';
import type { EntityFacts, EntityProbe, RelatedCandidate, RelateQuery } from '../../ports/graph.ts';
import type { Executor } from './executor.ts';
import { toEntity } from './mapping.ts';
import { entityVisible, IN_CHAIN_OR_SUBTREE, SCOPE_WHERE, scopeParams, SUBTREE } from './scope.ts';
import type { ScopeVectors } from './scope-vectors.ts';
import type { SubtreeSizes } from './subtree-size.ts';
import { Ranking, windows } from './vector-shards.ts';

/**
 * The write path's lookups for a whole request at once (ingest's "gather" step): one round trip per kind
 * however many statements an episode yields, where the pipeline used to ask per statement and per
 * entity in turn. Each query UNWINDs the request's items and runs the per-item lookup in a scoped
 * subquery, so every item gets exactly the answer it would get alone, under the same scope predicate.
 */

const relateWhere = (): string => `${SCOPE_WHERE} AND n.class <> 'OBSERVATION'
  AND n.status IN ['ACTIVE', 'CONTESTED', 'CANDIDATE']
  AND ${IN_CHAIN_OR_SUBTREE}`;

const RELATE_RETURN = `RETURN q.i AS i, n.id AS id, n.namespace AS namespace, n.sensitivity AS sensitivity,
  n.class AS class, n.subject AS subject, n.predicate AS predicate, n.object AS object, n.text AS text,
  n.status AS status, n.version AS version, n.confidence AS confidence, score`;

/** At or below this many records under the request, relate scores them exactly and skips the ANN index. */
export const RELATE_EXACT_BELOW = 200;

/** What the relate lookup reads with: the one executor, the request sizes, the vectors held in process. */
export interface RelateDeps {
  readonly db: Executor;
  readonly sizes: SubtreeSizes;
  readonly memory: ScopeVectors;
}

export async function relateCandidatesMany(
  deps: RelateDeps,
  scope: ReadScope,
  namespace: string,
  queries: readonly RelateQuery[],
  k: number,
): Promise<RelatedCandidate[][]> {
  if (queries.length === 0) return [];
  const params = { ...scopeParams(scope), ns: namespace, chain: namespaceChain(namespace), k };
  const bySubject = queries.map((q, i) => ({ i, subjectKey: q.subject.trim().toLowerCase() }));
  // Only records embedded by the query vector's model are compared with it (vectors of two models are not comparable).
  const withVector = queries.flatMap((q, i) =>
    q.vector ? [{ i, vector: [...q.vector], modelId: q.modelId }] : [],
  );
  const rows = await relateRows(deps, { tenant: scope.tenant, namespace, params, withVector, k }, bySubject);
  const out = queries.map(() => new Map<string, RelatedCandidate>());
  for (const r of rows) {
    const byId = out[Number(r.get('i'))]!;
    const c = toRelated(r, byId);
    byId.set(c.id, c);
  }
  return out.map((m) => [...m.values()]);
}

type SubjectQuery = { i: number; subjectKey: string };

/** Each subject query's latest relatable records with that subject (`$qs`); their score is null. */
const BY_SUBJECT = `UNWIND $qs AS q
     CALL (q) {
       MATCH (n:Record {tenant: $tenant, subjectKey: q.subjectKey}) WHERE ${relateWhere()}
       WITH n ORDER BY n.createdAt DESC LIMIT toInteger($k)
       RETURN n, null AS score
     }
     ${RELATE_RETURN}`;

/**
 * The subject matches and the vector neighbours of a request's queries. Where the request's vectors are
 * held in process, the subject part rides in the statement of the first window the ranking sends
 * (`UNION ALL`): one statement per relate, where it was two (a statement costs ~0.3 ms of the API's CPU
 * and more of Neo4j's however little it reads). Otherwise the two run side by side, as before.
 */
async function relateRows(
  deps: RelateDeps,
  v: VectorLookup,
  bySubject: readonly SubjectQuery[],
): Promise<Neo4jRecord[]> {
  const size = v.withVector.length > 0 ? await deps.sizes.of(v.tenant, v.namespace) : null;
  if (size !== null && deps.memory.covers(size)) return heldByVector(deps, v, bySubject);
  const [subjectRows, vectorRows] = await Promise.all([
    deps.db.read('relate.bySubjectMany', BY_SUBJECT, { ...v.params, qs: bySubject }),
    size === null ? [] : relateByVector(deps, v, size),
  ]);
  return [...subjectRows.records, ...vectorRows];
}

/** One request's relate lookup, as `relateCandidatesMany` takes it. */
export interface RelateCall {
  readonly scope: ReadScope;
  readonly namespace: string;
  readonly queries: readonly RelateQuery[];
  readonly k: number;
}

/** A call's answers, or why its group's lookup failed (only that group's callers see it). */
export type RelateAnswer = RelatedCandidate[][] | { readonly failed: unknown };

/**
 * Several requests' relate lookups, those under the same scope, namespace and k as one request of all
 * their queries (coalesce.ts gathers the calls of one event-loop turn). Each query is answered in its own
 * subquery, so its candidates are the same whichever queries share its statement. A group that fails
 * fails its own calls only: another scope's writers never get its error.
 */
export async function relateTogether(
  deps: RelateDeps,
  calls: readonly RelateCall[],
): Promise<RelateAnswer[]> {
  const groups = new Map<string, number[]>();
  calls.forEach((c, i) => {
    const key = JSON.stringify([c.scope, c.namespace, c.k]);
    const members = groups.get(key);
    if (members) members.push(i);
    else groups.set(key, [i]);
  });
  const out: RelateAnswer[] = calls.map(() => []);
  await Promise.all(
    [...groups.values()].map(async (members) => {
      const first = calls[members[0]!]!;
      const queries = members.flatMap((i) => calls[i]!.queries);
      try {
        const answers = await relateCandidatesMany(deps, first.scope, first.namespace, queries, first.k);
        let at = 0;
        for (const i of members) {
          out[i] = answers.slice(at, at + calls[i]!.queries.length);
          at += calls[i]!.queries.length;
        }
      } catch (e) {
        for (const i of members) out[i] = { failed: e };
      }
    }),
  );
  return out;
}

type VectorQuery = { i: number; vector: number[]; modelId: string };
/** One request's vector lookups: its tenant and namespace, the scope's parameters, the drafts' vectors. */
type VectorLookup = {
  tenant: string;
  namespace: string;
  params: Record<string, unknown>;
  withVector: readonly VectorQuery[];
  k: number;
};

/**
 * The k nearest relatable records of each query vector where the request's vectors are not held in
 * process (those go through heldByVector). A request covering few records scores them exactly (reading a
 * few hundred vectors is cheaper than an ANN call, and exact). A larger one asks the ANN index, which
 * answers before any WHERE: it over-fetches, and where that leaves fewer than k inside the scope (the
 * entitled set is small next to everything else), that query's records are scored exactly — read
 * through the request's namespace index, never the whole tenant.
 */
async function relateByVector(
  { db }: RelateDeps,
  { params, withVector, k }: VectorLookup,
  size: number,
): Promise<Neo4jRecord[]> {
  const exact = async (qs: readonly VectorQuery[]) =>
    (
      await db.read(
        'relate.byVectorExactMany',
        `UNWIND $qs AS q
         CALL (q) {
           ${SUBTREE}
           WITH n WHERE ${relateWhere()} AND n.embedding IS NOT NULL AND n.embeddingModel = q.modelId
           WITH n, vector.similarity.cosine(n.embedding, q.vector) AS score
           ORDER BY score DESC LIMIT toInteger($k)
           RETURN n, score
         }
         ${RELATE_RETURN}`,
        { ...params, qs },
      )
    ).records;
  if (size <= RELATE_EXACT_BELOW) return exact(withVector);
  const ann = (
    await db.read(
      'relate.byVectorMany',
      `UNWIND $qs AS q
       CALL (q) {
         CALL db.index.vector.queryNodes('record_embedding', toInteger($fetch), q.vector) YIELD node AS n, score
         WHERE ${relateWhere()} AND n.embeddingModel = q.modelId
         WITH n, score ORDER BY score DESC LIMIT toInteger($k)
         RETURN n, score
       }
       ${RELATE_RETURN}`,
      { ...params, qs: withVector, fetch: Math.max(100, k * 20) },
    )
  ).records;
  const found = new Map<number, number>();
  for (const r of ann) found.set(Number(r.get('i')), (found.get(Number(r.get('i'))) ?? 0) + 1);
  const short = withVector.filter((q) => (found.get(q.i) ?? 0) < k);
  if (short.length === 0) return ann;
  const shortIds = new Set(short.map((q) => q.i));
  return [...ann.filter((r) => !shortIds.has(Number(r.get('i')))), ...(await exact(short))];
}

/**
 * Relate over the vectors held in process: each query's ranking of the request's records, checked by
 * Neo4j a window at a time (relatable, visible, of the query's model) until k are found or the ranking
 * ends. The cosine is the one the ranking computed (32-bit, within ~1e-6 of Neo4j's): Neo4j receives the
 * window's ids and their scores, never the query vector, and reads no embedding. Why: scoring the
 * window in Cypher made Neo4j decode each record's stored 384-number array (a JFR profile of the write
 * bench). The first window is 2k ids: Neo4j's work grows with the ids (an index seek and the filter's
 * properties each), and most nearest records are relatable and visible; where they are not, the next
 * window is eight times larger. Together: the statement's mean execution by Neo4j's clock 2.6–3.0 →
 * 1.5–1.75 ms (bench:ledger, hashing, three alternated pairs; the scores alone, at 32 ids: 2.1–2.2).
 * The first window's statement also answers the subject queries (relateRows); a subject
 * match's row has no score, so it never counts toward a ranking's k.
 */
async function heldByVector(
  { db, memory }: RelateDeps,
  { tenant, namespace, params, withVector, k }: VectorLookup,
  bySubject: readonly SubjectQuery[],
): Promise<Neo4jRecord[]> {
  const shards = await memory.shards(tenant, namespace);
  const ranked = new Map(withVector.map((q) => [q.i, new Ranking(shards, q.modelId, q.vector)]));
  const found = new Map<number, number>();
  const rows: Neo4jRecord[] = [];
  let subject: readonly SubjectQuery[] | null = bySubject;
  for (const { from, to } of windows(2 * k)) {
    const open = withVector.filter((q) => (found.get(q.i) ?? 0) < k && ranked.get(q.i)!.size > from);
    if (open.length === 0 && !subject) break;
    const parts = [...(subject ? [BY_SUBJECT] : []), ...(open.length > 0 ? [HELD_WINDOW] : [])];
    const res = await db.read(
      subject ? 'relate.bySubjectAndHeldMany' : 'relate.byVectorHeldMany',
      parts.join('\n     UNION ALL\n     '),
      {
        ...params,
        qs: subject ?? [],
        held: open.map((q) => {
          const window = ranked.get(q.i)!.topScored(to).slice(from);
          return {
            i: q.i,
            modelId: q.modelId,
            ids: window.map((w) => w.id),
            // Neo4j's scale for vector.similarity.cosine, as the other lookups return it: (1 + cos) / 2.
            scores: window.map((w) => (1 + w.cosine) / 2),
            k: k - (found.get(q.i) ?? 0),
          };
        }),
      },
    );
    subject = null;
    for (const r of res.records) {
      rows.push(r);
      if (r.get('score') === null) continue; // a subject match
      const i = Number(r.get('i'));
      found.set(i, (found.get(i) ?? 0) + 1);
    }
  }
  return rows;
}

/**
 * One window of each held ranking (`$held`): its ids that are relatable and visible, in ranking order,
 * each with the score the ranking gave it. A record's model is set and cleared with its embedding
 * (projection-store.ts), so `embeddingModel = q.modelId` also says it still has one.
 */
const HELD_WINDOW = `UNWIND $held AS q
     CALL (q) {
       UNWIND range(0, size(q.ids) - 1) AS j
       MATCH (n:Record {tenant: $tenant, id: q.ids[j]})
       WHERE ${relateWhere()} AND n.embeddingModel = q.modelId
       WITH n, j ORDER BY j
       WITH collect({n: n, j: j}) AS visible
       UNWIND visible[0..q.k] AS v
       RETURN v.n AS n, q.scores[v.j] AS score
     }
     ${RELATE_RETURN}`;

/** A candidate row; a subject match keeps the cosine its vector match found (either may come first). */
function toRelated(r: Neo4jRecord, seen: ReadonlyMap<string, RelatedCandidate>): RelatedCandidate {
  const score = r.get('score') as number | null;
  const id = String(r.get('id'));
  const cosine = score === null ? (seen.get(id)?.cosine ?? null) : 2 * Number(score) - 1;
  return {
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
  };
}

/**
 * Entity resolution's facts for every probe: the exact match (id, external id, or alias of a compatible
 * type — "Mercury" the planet is not "Mercury" the project), the nearest visible neighbour (exact cosine
 * within the tenant: other tenants' entities never crowd an ANN top-k), and whether the probe's default
 * id is taken and by a visible entity. Visibility is the read path's one entity predicate.
 */
export async function entityFacts(
  db: Executor,
  scope: ReadScope,
  probes: readonly EntityProbe[],
): Promise<EntityFacts[]> {
  if (probes.length === 0) return [];
  const ps = probes.map((p, i) => ({
    i,
    id: p.id ?? null,
    ext: p.externalId ?? null,
    alias: p.alias?.toLowerCase() ?? null,
    type: p.type ?? null,
    vector: p.vector ? [...p.vector] : null,
    modelId: p.modelId,
    defaultId: p.defaultId,
  }));
  const res = await db.read(
    'entity.factsMany',
    `UNWIND $ps AS p
     RETURN p.i AS i,
       COLLECT {
         MATCH (e:Entity {tenant: $tenant})
         WHERE ((p.id IS NOT NULL AND e.id = p.id)
            OR (p.ext IS NOT NULL AND p.ext IN e.externalIds)
            OR (p.alias IS NOT NULL AND (toLower(e.name) = p.alias OR p.alias IN e.aliases)
                AND (p.type IS NULL OR e.type IS NULL OR e.type = p.type)))
           AND ${entityVisible('e')}
         RETURN e ORDER BY e.id LIMIT 1
       } AS exact,
       COLLECT {
         MATCH (e:Entity {tenant: $tenant})
         WHERE p.vector IS NOT NULL AND e.embedding IS NOT NULL AND e.embeddingModel = p.modelId
           AND ${entityVisible('e')}
         WITH e, vector.similarity.cosine(e.embedding, p.vector) AS score
         RETURN {e: e, score: score} ORDER BY score DESC, e.id LIMIT 1
       } AS nearest,
       EXISTS { MATCH (d:Entity {tenant: $tenant, id: p.defaultId}) } AS taken,
       EXISTS { MATCH (d:Entity {tenant: $tenant, id: p.defaultId}) WHERE ${entityVisible('d')} } AS visible`,
    { ...scopeParams(scope), ps },
  );
  const out: EntityFacts[] = probes.map(() => ({
    exact: null,
    nearest: null,
    defaultIdTaken: false,
    defaultIdVisible: false,
  }));
  for (const r of res.records) {
    const [exact] = r.get('exact') as Array<{ properties: Record<string, unknown> }>;
    const [nearest] = r.get('nearest') as Array<{
      e: { properties: Record<string, unknown> };
      score: number;
    }>;
    out[Number(r.get('i'))] = {
      exact: exact ? toEntity(exact.properties) : null,
      nearest: nearest ? { ...toEntity(nearest.e.properties), cosine: 2 * Number(nearest.score) - 1 } : null,
      defaultIdTaken: r.get('taken') === true,
      defaultIdVisible: r.get('visible') === true,
    };
  }
  return out;
}
