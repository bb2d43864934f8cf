// Namespace grants (AccessGranted / AccessRevoked), the handoff contract's state per outbox stream, and
// handoff token ids already used (replay protection).
CREATE CONSTRAINT grant_key IF NOT EXISTS FOR (n:Grant) REQUIRE (n.tenant, n.id) IS UNIQUE;
CREATE INDEX grant_grantee IF NOT EXISTS FOR (n:Grant) ON (n.tenant, n.grantee);
CREATE CONSTRAINT handoff_state_key IF NOT EXISTS FOR (n:HandoffState) REQUIRE n.stream IS UNIQUE;
CREATE CONSTRAINT token_use_key IF NOT EXISTS FOR (n:TokenUse) REQUIRE n.jti IS UNIQUE;
