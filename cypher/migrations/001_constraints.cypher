// Uniqueness: every domain key includes the tenant.
CREATE CONSTRAINT record_key IF NOT EXISTS FOR (n:Record) REQUIRE (n.tenant, n.id) IS UNIQUE;
CREATE CONSTRAINT revision_key IF NOT EXISTS FOR (n:Revision) REQUIRE (n.tenant, n.recordId, n.version) IS UNIQUE;
CREATE CONSTRAINT entity_key IF NOT EXISTS FOR (n:Entity) REQUIRE (n.tenant, n.id) IS UNIQUE;
CREATE CONSTRAINT receipt_key IF NOT EXISTS FOR (n:Receipt) REQUIRE (n.tenant, n.idempotencyKey) IS UNIQUE;
CREATE CONSTRAINT checkpoint_key IF NOT EXISTS FOR (n:Checkpoint) REQUIRE (n.topic, n.partition) IS UNIQUE;
