// Steward findings (issue #14): one node per finding, found by tenant and id, listed per tenant.
CREATE CONSTRAINT finding_key IF NOT EXISTS FOR (n:Finding) REQUIRE (n.tenant, n.id) IS UNIQUE;
