// Writes about one subject are decided one at a time across API processes (src/ingest/subject-gate.ts,
// src/adapters/neo4j/subject-turns.ts): a turn is the lock a MERGE takes on a SubjectTurn node under this
// constraint, in a transaction that is rolled back, so no SubjectTurn node is ever stored. Without the
// constraint two MERGEs of one key would not wait for each other.
CREATE CONSTRAINT subject_turn_key IF NOT EXISTS FOR (t:SubjectTurn) REQUIRE t.key IS UNIQUE;
