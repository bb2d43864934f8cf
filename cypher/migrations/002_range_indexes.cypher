// Range indexes for the structured reads: namespace subtrees, status, class, predicate, time.
CREATE INDEX record_tenant_ns IF NOT EXISTS FOR (n:Record) ON (n.tenant, n.namespace);
CREATE INDEX record_status IF NOT EXISTS FOR (n:Record) ON (n.tenant, n.status);
CREATE INDEX record_class IF NOT EXISTS FOR (n:Record) ON (n.tenant, n.class);
CREATE INDEX record_predicate IF NOT EXISTS FOR (n:Record) ON (n.tenant, n.predicate);
CREATE INDEX revision_recorded IF NOT EXISTS FOR (n:Revision) ON (n.tenant, n.recordedAt);
CREATE INDEX entity_aliases IF NOT EXISTS FOR (n:Entity) ON (n.aliases);
CREATE INDEX entity_external IF NOT EXISTS FOR (n:Entity) ON (n.externalIds);
CREATE INDEX entity_name IF NOT EXISTS FOR (n:Entity) ON (n.tenant, n.name);
