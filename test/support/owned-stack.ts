import { stackStatus } from '../../scripts/stack.mjs';
import { endpoints } from './harness.ts';

/**
 * Whether this run's Neo4j and Kafka are the ones `scripts/stack.mjs` started (as `npm test` and CI do).
 * Tests that kill and restart servers run only then; against servers they do not own they are reported
 * as skipped, never passed.
 */
export async function ownsStack(): Promise<boolean> {
  const s = await stackStatus();
  const { NEO4J_URI, KAFKA_BROKERS } = endpoints();
  return (
    s.services.neo4j.state === 'running' &&
    s.services.kafka.state === 'running' &&
    NEO4J_URI.endsWith(s.services.neo4j.address) &&
    KAFKA_BROKERS === s.services.kafka.address
  );
}
