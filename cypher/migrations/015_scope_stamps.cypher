// The vector arm's in-process shards (src/adapters/neo4j/scope-vectors.ts) learn what changed from these:
// one ScopeStamp per tenant and namespace (a random epoch, a sequence number each projection transaction
// bumps) and each Record's `stamp`, the number its namespace had when the record was last written. The
// index finds a namespace's records written after a stamp. Records projected before this migration get
// stamp 0 and their namespaces a first stamp, so the first load of a shard finds them all.
CREATE CONSTRAINT scope_stamp_key IF NOT EXISTS FOR (s:ScopeStamp) REQUIRE (s.tenant, s.namespace) IS UNIQUE;
CREATE INDEX record_namespace_stamp IF NOT EXISTS FOR (n:Record) ON (n.tenant, n.namespace, n.stamp);
MATCH (n:Record) WHERE n.stamp IS NULL
CALL (n) { SET n.stamp = 0 } IN TRANSACTIONS OF 10000 ROWS;
MATCH (n:Record) WITH DISTINCT n.tenant AS tenant, n.namespace AS namespace
MERGE (s:ScopeStamp {tenant: tenant, namespace: namespace})
ON CREATE SET s.epoch = randomUUID(), s.seq = 0;
