// Tenant-only lookups (exact vector scoring inside one tenant, entity scans).
CREATE INDEX entity_tenant IF NOT EXISTS FOR (n:Entity) ON (n.tenant);
CREATE INDEX record_tenant IF NOT EXISTS FOR (n:Record) ON (n.tenant);
