import { createHash } from 'node:crypto';
import { namespaceChain } from '../../domain/model.ts';

/**
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
