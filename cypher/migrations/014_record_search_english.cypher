// record_search (009) with Lucene's English analyzer: the lexical arm's large-scope search then finds a
// record by its words' Porter stems ("databases" for "database"), as the ranking compares them
// (src/domain/lexical-terms.ts, the same Porter algorithm), and stop words no longer match most records.
// Scope terms (hex words) pass the analyzer alike in the index and in the query. A new name, so a query
// never meets the old analyzer. The old index goes first: IF NOT EXISTS skips any index on the same
// label and properties, whatever its name. awaitIndexes (migrate) waits for the new one's population.
DROP INDEX record_search IF EXISTS;
CREATE FULLTEXT INDEX record_search_en IF NOT EXISTS FOR (n:Record) ON EACH [n.text, n.subject, n.object, n.context, n.scopeTerms] OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
