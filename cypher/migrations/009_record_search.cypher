// Recall's lexical arm: one fulltext document per record with its text, subject, object, the context of
// its turn (neighbouring turns, see src/domain/turn-context.ts) and its scope terms (tenant + namespace as
// opaque words, see src/adapters/neo4j/scope-terms.ts), so a query names its scope inside the index.
// Records projected before this migration get their scope terms from the backfill in migrate().
CREATE FULLTEXT INDEX record_search IF NOT EXISTS FOR (n:Record) ON EACH [n.text, n.subject, n.object, n.context, n.scopeTerms];
