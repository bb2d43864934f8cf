import { Neo4jAnalytics } from '../../src/adapters/neo4j/analytics.ts';
import { Neo4jGraphStore } from '../../src/adapters/neo4j/graph-store.ts';
import type { CypherExecutor } from '../../src/adapters/neo4j/executor.ts';
import type { AnalyticsReads } from '../../src/ports/analytics.ts';
import type { IngestLookups, RecallArms, RecordReads } from '../../src/ports/graph.ts';
import { recordingExecutor, type Answers } from './recording-executor.ts';

/** The read roles over a recording executor. */
export function recordedRoles(answers: Answers = {}) {
  const db = recordingExecutor(answers);
  const store = new Neo4jGraphStore(db as unknown as CypherExecutor);
  const reads: RecordReads = store;
  const arms: RecallArms = store;
  const lookups: IngestLookups = store;
  const analytics: AnalyticsReads = new Neo4jAnalytics(store);
  return { db, reads, arms, lookups, analytics };
}
