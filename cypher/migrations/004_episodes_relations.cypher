// Episodes (immutable sources, chunked with offsets) and entity embeddings for resolution.
CREATE CONSTRAINT episode_key IF NOT EXISTS FOR (n:Episode) REQUIRE (n.tenant, n.id) IS UNIQUE;
CREATE CONSTRAINT chunk_key IF NOT EXISTS FOR (n:Chunk) REQUIRE (n.tenant, n.episodeId, n.index) IS UNIQUE;
CREATE INDEX record_episode IF NOT EXISTS FOR (n:Record) ON (n.tenant, n.episodeId);
CREATE VECTOR INDEX entity_embedding IF NOT EXISTS FOR (n:Entity) ON (n.embedding)
  OPTIONS { indexConfig: { `vector.dimensions`: 384, `vector.similarity_function`: 'cosine' } };
