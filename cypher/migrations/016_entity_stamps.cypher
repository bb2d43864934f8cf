// Entity resolution's in-process index (src/adapters/neo4j/entity-held.ts) learns what changed from these,
// as the vector shards do from 015: one ScopeStamp per tenant under the "namespace" '#entities' (no
// namespace starts with '#'), bumped by each projection transaction that writes the tenant's entities, and
// each Entity's `stamp`, the number it had when the entity was last written. The index finds a tenant's
// entities written after a stamp. Entities projected before this migration get stamp 0 and their tenants
// a first stamp, so the first load of a tenant finds them all.
CREATE INDEX entity_tenant_stamp IF NOT EXISTS FOR (n:Entity) ON (n.tenant, n.stamp);
MATCH (n:Entity) WHERE n.stamp IS NULL
CALL (n) { SET n.stamp = 0 } IN TRANSACTIONS OF 10000 ROWS;
MATCH (n:Entity) WITH DISTINCT n.tenant AS tenant
MERGE (s:ScopeStamp {tenant: tenant, namespace: '#entities'})
ON CREATE SET s.epoch = randomUUID(), s.seq = 0;
