import { createHash } from 'node:crypto';
import { namespaceChain, Sensitivities, type Sensitivity } from '../../domain/model.ts';
import type { ArmQuery, ReadScope } from '../../ports/graph.ts';

/*
 * The scope predicate, in one place: every read and every recall arm compiles its caller's ReadScope into
 * Cypher with these builders and parameters, and writes no tenant, label or namespace filter of its own.
 * test/cypher pins that each one carries them (a recording executor captures the text it sends).
 */

/** World time's "still valid": a record with no validTo is valid until here. */
export const END_OF_TIME = '9999-12-31T23:59:59.999Z';

/**
 * The Cypher fragment that enforces a ReadScope on a Record bound to `v`: the tenant, then at least one
 * grant whose subtree holds the record and whose label ceiling covers it. Parameters: $tenant, $grants —
 * or, with `p` a row's name and a dot (`s.`), that row's tenant and grants, where one statement serves
 * several scopes (each row built by scopeParams, like a statement's own parameters).
 */
export const scopeWhere = (v: string, p = '$') => `${v}.tenant = ${p}tenant
  AND any(g IN ${p}grants WHERE (g.root IS NULL OR ${v}.namespace = g.root OR ${v}.namespace STARTS WITH g.root + '/')
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

/** The parameters of both predicates: each grant's subtree with the labels up to its ceiling. */
export const scopeParams = (s: ReadScope) => ({
  tenant: s.tenant,
  grants: s.grants.map((g) => ({
    root: g.root,
    labels: Sensitivities.slice(0, Sensitivities.indexOf(g.maxSensitivity) + 1) as Sensitivity[],
  })),
  allLabels: Sensitivities.length,
});

/**
 * The ScopeStamp "namespace" of a tenant's SAME_AS links (no record's namespace is empty): the projection
 * bumps it in every transaction that writes an entity's SAME_AS, and a recall reads it with its namespaces'
 * stamps, so the graph arm's held orders (recall-arms.ts) follow entity links too.
 */
export const SAME_AS_STAMP = '';

/**
 * The ScopeStamp "namespace" of a tenant's entities (no namespace starts with '#'): the projection bumps it
 * in every transaction that writes one of the tenant's entities and stamps each entity with its new number,
 * so entity resolution's index held in process (entity-held.ts) loads only what changed.
 */
export const ENTITY_STAMP = '#entities';

/** A namespace of a tenant as one map key (the subtree sizes, the projection's stamps, the held vectors). */
export const namespaceKey = (tenant: string, namespace: string): string => `${tenant}\u0000${namespace}`;

/** The request's namespace subtree ($ns and below), on the record `n`. */
export const IN_SUBTREE = `(n.namespace = $ns OR n.namespace STARTS WITH $ns + '/')`;
/**
 * The request's namespaces that overlap $ns: its ancestors ($chain, itself included) and its subtree (or
 * a row's `ns` and `chain`, as scopeWhere takes `p`).
 */
export const inChainOrSubtree = (p = '$') =>
  `(n.namespace IN ${p}chain OR n.namespace STARTS WITH ${p}ns + '/')`;
export const IN_CHAIN_OR_SUBTREE = inChainOrSubtree();

/** The parameters of a recall arm: the scope's, the request's namespaces, classes and both time axes. */
export function armParams(q: ArmQuery) {
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
export const ARM_WHERE = `${SCOPE_WHERE}
    AND ${IN_CHAIN_OR_SUBTREE}
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
 * index seeks (the planner would otherwise read the whole tenant for `IN $chain OR STARTS WITH`). Only a
 * stream to filter: ARM_WHERE follows it (the size probe alone counts it, to choose a strategy).
 * Both seeks are hinted: left alone, the planner answered `IN $chain` from the tenant-only index and
 * filtered every record of the tenant (100,045 rows read for a 20-record namespace at 100k, PROFILE in
 * bench:recall), which made a small namespace the slowest recall of all. `SEEK`: a plain hint also
 * allows a scan of the named index, which Neo4j chose for other statements planned over an empty graph
 * (README, "Plans made over an empty graph").
 */
export const SUBTREE = `CALL () {
      MATCH (n:Record) USING INDEX SEEK n:Record(tenant, namespace)
      WHERE n.tenant = $tenant AND n.namespace IN $chain RETURN n
      UNION
      MATCH (n:Record) USING INDEX SEEK n:Record(tenant, namespace)
      WHERE n.tenant = $tenant AND n.namespace STARTS WITH $ns + '/' RETURN n }`;

/*
 * Scope terms: the tenant and namespace of a record as opaque words in its fulltext document, so that a
 * lexical query can require them and Lucene scores only what lies in the request's scope (cost in
 * proportion to what the caller may see, never to every tenant's matches). A record carries `e<h>` for
 * its exact namespace and `s<h>` for each of its namespace's prefixes, itself included, where h hashes
 * the tenant with that namespace: one token for Lucene's standard analyzer (lower-case hex).
 * Entitlement (grants, labels) is still checked by the query's WHERE: these terms only narrow the stream.
 */
const h = (tenant: string, ns: string): string =>
  createHash('sha256').update(`${tenant}\u0000${ns}`).digest('hex').slice(0, 20);

export function scopeTerms(tenant: string, namespace: string): string {
  return [`e${h(tenant, namespace)}`, ...namespaceChain(namespace).map((p) => `s${h(tenant, p)}`)].join(' ');
}

/** The Lucene clause a request over `namespace` (its ancestors and its subtree) requires. */
export function scopeClause(tenant: string, namespace: string): string {
  const ancestors = namespaceChain(namespace).slice(1);
  return `scopeTerms:(${[`s${h(tenant, namespace)}`, ...ancestors.map((a) => `e${h(tenant, a)}`)].join(' OR ')})`;
}
