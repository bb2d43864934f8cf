// Recall's lexical (BM25) and vector arms. The vector dimension matches the default local embedder.
CREATE FULLTEXT INDEX record_text IF NOT EXISTS FOR (n:Record) ON EACH [n.text, n.subject, n.object];
CREATE VECTOR INDEX record_embedding IF NOT EXISTS FOR (n:Record) ON (n.embedding)
  OPTIONS { indexConfig: { `vector.dimensions`: 384, `vector.similarity_function`: 'cosine' } };
