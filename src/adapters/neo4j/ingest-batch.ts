import type { Record as Neo4jRecord } from 'neo4j-driver';
import { namespaceChain, type RecordClass, type RecordStatus, type Sensitivity } from '../../domain/model.ts';
import type { ReadScope } from '../../domain/policy.ts';
import type { RelatedCandidate, RelateQuery } from '../../ports/ingest-lookups.ts';
import type { Executor } from './executor.ts';
import { BY_SUBJECT, RELATE_RETURN, relateWhere } from './relate-cypher.ts';
import { heldTogether, type HeldLookup, type SubjectQuery, type VectorQuery } from './relate-held.ts';
import { scopeParams, SUBTREE } from './scope.ts';
import type { ScopeVectors } from './scope-vectors.ts';
import type { SubtreeSizes } from './subtree-size.ts';
import { Ranking } from './vector-shards.ts';
import { subjectKeyOf } from '../../domain/subject-key.ts';

/**
 * The write path's lookups for a whole request at once (ingest's "gather" step): one round trip per kind
 * however many statements an episode yields, where the pipeline used to ask per statement and per
 * entity in turn. Each query UNWINDs the request's items and runs the per-item lookup in a scoped
 * subquery, so every item gets exactly the answer it would get alone, under the same scope predicate.
 */

/** At or below this many records under the request, relate scores them exactly and skips the ANN index. */
export const RELATE_EXACT_BELOW = 200;

/** What the relate lookup reads with: the one executor, the request sizes, the vectors held in process. */
export interface RelateDeps {
  readonly db: Executor;
  readonly sizes: SubtreeSizes;
  readonly memory: ScopeVectors;
}

/** One request's relate lookup, as relateTogether takes it. */
export interface RelateCall {
  readonly scope: ReadScope;
  readonly namespace: string;
  readonly queries: readonly RelateQuery[];
  readonly k: number;
}

/** A call's answers, or why its group's lookup failed. */
export type RelateAnswer = RelatedCandidate[][] | { readonly failed: unknown };

/** The calls of one scope, namespace and k: asked as one request of all their queries. */
type Group = {
  readonly members: readonly number[];
  readonly call: RelateCall;
  readonly queries: RelateQuery[];
};

/**
 * Several requests' relate lookups (coalesce.ts gathers the calls of one event-loop turn). Those under the
 * same scope, namespace and k are one request of all their queries. Where a request's vectors are held
 * in process, the requests of every scope with the same k go as one statement a window (relate-held.ts);
 * the others as a statement or two of their own. Each query is answered in its own subquery under its
 * own request's scope, so its candidates are the same whichever queries share its statement. A request
 * whose own steps fail (its size, its shards) fails its own calls only; a shared statement that fails
 * fails every call in it, as a coalesced point read does.
 */
export async function relateTogether(
  deps: RelateDeps,
  calls: readonly RelateCall[],
): Promise<RelateAnswer[]> {
  const out: RelateAnswer[] = calls.map(() => []);
  const answer = (group: Group, rows: readonly Neo4jRecord[]) => {
    const answers = candidates(group.queries.length, rows);
    let at = 0;
    for (const i of group.members) {
      out[i] = answers.slice(at, at + calls[i]!.queries.length);
      at += calls[i]!.queries.length;
    }
  };
  const fail = (group: Group, e: unknown) => group.members.forEach((i) => (out[i] = { failed: e }));
  // Planned in the calls' order (a request that fails here fails alone).
  const groups = groupsOf(calls);
  const plans = await Promise.all(
    groups.map((group) => plan(deps, group).catch((e: unknown) => void fail(group, e))),
  );
  const planned = groups.flatMap((group, i) => (plans[i] ? [{ group, plan: plans[i] }] : []));
  // The held lookups by k (LIMIT takes no variable, so one statement serves one k), then the rest.
  const heldByK = new Map<number, Array<{ group: Group; held: HeldLookup }>>();
  for (const { group, plan: p } of planned) {
    if (p.held) heldByK.set(group.call.k, [...(heldByK.get(group.call.k) ?? []), { group, held: p.held }]);
  }
  await Promise.all([
    ...[...heldByK].map(([k, list]) =>
      heldTogether(
        deps.db,
        list.map((x) => x.held),
        k,
      )
        .then((rows) => list.forEach((x, g) => answer(x.group, rows[g]!)))
        .catch((e: unknown) => list.forEach((x) => fail(x.group, e))),
    ),
    ...planned
      .filter(({ plan: p }) => !p.held)
      .map(({ group, plan: p }) =>
        rowsApart(deps, p)
          .then((rows) => answer(group, rows))
          .catch((e: unknown) => fail(group, e)),
      ),
  ]);
  return out;
}

function groupsOf(calls: readonly RelateCall[]): Group[] {
  const groups = new Map<string, { members: number[]; call: RelateCall; queries: RelateQuery[] }>();
  calls.forEach((c, i) => {
    const key = JSON.stringify([c.scope, c.namespace, c.k]);
    const group = groups.get(key);
    if (group) {
      group.members.push(i);
      group.queries.push(...c.queries);
    } else groups.set(key, { members: [i], call: c, queries: [...c.queries] });
  });
  return [...groups.values()];
}

/** A request's lookup: its parameters and queries, and its rankings where its vectors are held. */
type Plan = VectorLookup & {
  readonly bySubject: readonly SubjectQuery[];
  readonly size: number | null;
  readonly held: HeldLookup | null;
};

async function plan(deps: RelateDeps, { call, queries }: Group): Promise<Plan> {
  const { scope, namespace, k } = call;
  const where = { ...scopeParams(scope), ns: namespace, chain: namespaceChain(namespace) };
  const bySubject = queries.map((q, i) => ({ i, subjectKey: subjectKeyOf(q.subject) }));
  // Only records embedded by the query vector's model are compared with it (vectors of two models are not comparable).
  const withVector = queries.flatMap((q, i) =>
    q.vector ? [{ i, vector: [...q.vector], modelId: q.modelId }] : [],
  );
  const base = { tenant: scope.tenant, namespace, params: { ...where, k }, withVector, k, bySubject };
  const size = withVector.length > 0 ? await deps.sizes.of(scope.tenant, namespace) : null;
  if (size === null || !deps.memory.covers(size)) return { ...base, size, held: null };
  const shards = await deps.memory.shards(scope.tenant, namespace);
  const ranked = new Map(withVector.map((q) => [q.i, new Ranking(shards, q.modelId, q.vector)]));
  return { ...base, size, held: { scope: where, bySubject, withVector, ranked } };
}

/** Each query's candidates from its rows, one per record (a subject match keeps its vector match's cosine). */
function candidates(queries: number, rows: readonly Neo4jRecord[]): RelatedCandidate[][] {
  const out = Array.from({ length: queries }, () => new Map<string, RelatedCandidate>());
  for (const r of rows) {
    const byId = out[Number(r.get('i'))]!;
    const c = toRelated(r, byId);
    byId.set(c.id, c);
  }
  return out.map((m) => [...m.values()]);
}

/** A request whose vectors are not held: its subject matches and its vector neighbours side by side. */
async function rowsApart(deps: RelateDeps, p: Plan): Promise<Neo4jRecord[]> {
  const [subjectRows, vectorRows] = await Promise.all([
    deps.db.read('relate.bySubjectMany', BY_SUBJECT, { ...p.params, qs: p.bySubject }),
    p.size === null ? [] : relateByVector(deps, p, p.size),
  ]);
  return [...subjectRows.records, ...vectorRows];
}

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
 * process (those go through relate-held.ts). A request covering few records scores them exactly (reading a
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
