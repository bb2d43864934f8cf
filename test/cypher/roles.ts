import { Neo4jAnalytics } from '../../src/adapters/neo4j/analytics.ts';
import { Neo4jIngestLookups } from '../../src/adapters/neo4j/ingest-lookups.ts';
import { Neo4jRecallArms } from '../../src/adapters/neo4j/recall-arms.ts';
import { Neo4jRecordReads } from '../../src/adapters/neo4j/record-reads.ts';
import { ScopeVectors } from '../../src/adapters/neo4j/scope-vectors.ts';
import type { AnalyticsReads } from '../../src/ports/analytics.ts';
import type { RecallArms, RecordReads } from '../../src/ports/graph.ts';
import type { IngestLookups } from '../../src/ports/ingest-lookups.ts';
import { recordingExecutor, type Answers } from './recording-executor.ts';

/** The read roles, each over the same recording executor (`vectorsHeld` 0: the vector arm scans in Cypher). */
export function recordedRoles(answers: Answers = {}, vectorsHeld?: number) {
  const db = recordingExecutor(answers);
  const reads: RecordReads = new Neo4jRecordReads(db);
  const memory = new ScopeVectors(db, vectorsHeld ?? ScopeVectors.DEFAULT_HELD);
  const arms: RecallArms = new Neo4jRecallArms(db, memory);
  const lookups: IngestLookups = new Neo4jIngestLookups(db, memory);
  const analytics: AnalyticsReads = new Neo4jAnalytics(db);
  return { db, reads, arms, lookups, analytics };
}
