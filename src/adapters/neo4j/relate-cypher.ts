import { inChainOrSubtree, scopeWhere } from './scope.ts';

/**
 * The text of relate's statements (ingest-batch.ts, relate-held.ts). Each is written once, in two forms
 * of where its scope comes from: the statement's own parameters ($tenant, $grants, $ns, $chain: one
 * request's scope), or one row of `$groups` per request (`s.tenant`, …), where the lookups of several
 * scopes share a statement. The predicate is the one scope.ts builds either way.
 *
 * Each MATCH names the index it seeks (`USING INDEX SEEK`). Why: Neo4j plans a statement once and keeps
 * the plan while its statistics have not moved far. On a new database (a fresh install, every CI run)
 * the first plan is made over an empty graph, where scanning an index and filtering costs nothing, and
 * that plan stayed as the graph grew: every subject query and every ranked id then read all the Record
 * entries of the (tenant, status) or (tenant, class) index (PROFILE: 2.8M rows for 528 ids over 5k
 * records, ~1 s a statement). A plain `USING INDEX` hint is not enough: Neo4j then scans the named index
 * (seen). seek-plans.test.ts checks the plans.
 */

/** What relate may compare a draft with, under the scope whose parameters `p` names ('$' or 's.'). */
export const relateWhere = (p = '$'): string => `${scopeWhere('n', p)} AND n.class <> 'OBSERVATION'
  AND n.status IN ['ACTIVE', 'CONTESTED', 'CANDIDATE']
  AND ${inChainOrSubtree(p)}`;

const COLUMNS = `q.i AS i, n.id AS id, n.namespace AS namespace, n.sensitivity AS sensitivity,
  n.class AS class, n.subject AS subject, n.predicate AS predicate, n.object AS object, n.text AS text,
  n.status AS status, n.version AS version, n.confidence AS confidence, score`;

/** A candidate's columns, by query (`i`); with the statement's groups, by group (`g`) too. */
export const RELATE_RETURN = `RETURN ${COLUMNS}`;
const GROUP_RETURN = `RETURN s.g AS g, ${COLUMNS}`;

/**
 * Each subject query's latest relatable records with that subject; their score is null. `rows` binds
 * `q` (and `s`, the scope's row, where `p` is 's.').
 */
const bySubject = (rows: string, vars: string, p: string, ret: string) => `${rows}
     CALL (${vars}) {
       MATCH (n:Record {tenant: ${p}tenant, subjectKey: q.subjectKey})
       USING INDEX SEEK n:Record(tenant, subjectKey)
       WHERE ${relateWhere(p)}
       WITH n ORDER BY n.createdAt DESC LIMIT toInteger($k)
       RETURN n, null AS score
     }
     ${ret}`;

/** The subject queries of one request (`$qs`), under the statement's scope. */
export const BY_SUBJECT = bySubject('UNWIND $qs AS q', 'q', '$', RELATE_RETURN);

/** The subject queries of each group of `$groups` (its `qs`), under that group's scope. */
export const GROUPS_BY_SUBJECT = bySubject(
  `UNWIND $groups AS s
     UNWIND s.qs AS q`,
  's, q',
  's.',
  GROUP_RETURN,
);

/**
 * One window of each held ranking of each group (`s.held`): its ids that are relatable and visible under
 * the group's scope, in ranking order, at most `q.k`, each with the score the ranking gave it. A record's
 * model is set and cleared with its embedding (projection-store.ts), so `embeddingModel = q.modelId` also
 * says it still has one.
 */
export const GROUPS_HELD_WINDOW = `UNWIND $groups AS s
     UNWIND s.held AS q
     CALL (s, q) {
       UNWIND range(0, size(q.ids) - 1) AS j
       MATCH (n:Record {tenant: s.tenant, id: q.ids[j]})
       USING INDEX SEEK n:Record(tenant, id)
       WHERE ${relateWhere('s.')} AND n.embeddingModel = q.modelId
       WITH n, j ORDER BY j
       WITH collect({n: n, j: j}) AS visible
       UNWIND visible[0..q.k] AS v
       RETURN v.n AS n, q.scores[v.j] AS score
     }
     ${GROUP_RETURN}`;
