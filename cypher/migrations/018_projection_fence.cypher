// A rebuild fences its topic's projection (src/adapters/neo4j/admin.ts, fenceProjection): one fence per
// topic, so two rebuilds started at once MERGE the same node, the later one replacing the earlier's id.
CREATE CONSTRAINT projection_fence_topic IF NOT EXISTS FOR (f:ProjectionFence) REQUIRE f.topic IS UNIQUE;
