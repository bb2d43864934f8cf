import { randomUUID } from 'node:crypto';
import { CypherExecutor } from '../../src/adapters/neo4j/executor.ts';
import { Neo4jGraphStore } from '../../src/adapters/neo4j/graph-store.ts';
import type { ProjectionWrite } from '../../src/ports/graph.ts';
import { testConfig } from './harness.ts';

/**
 * The contract tier's graph: the real Neo4j of the test stack, migrated, a tenant and a checkpoint topic
 * of the test's own (so files never see each other's state), writes through the projection port, and a
 * cleanup that removes exactly what the test wrote.
 */
export async function contractGraph(name: string, opts: { vectorsHeld?: number } = {}) {
  const c = testConfig().neo4j;
  const db = CypherExecutor.connect(c.uri, c.user, c.password, c.database);
  const graph = new Neo4jGraphStore(db, opts);
  await graph.admin.migrate();
  const tenant = `${name}-${randomUUID()}`;
  const topic = `${name}-${randomUUID()}`;
  let offset = 0n;
  return {
    db,
    graph,
    tenant,
    topic,
    /** One projection transaction, as the projector runs it: the checkpoint moves by one. */
    project: (w: Partial<ProjectionWrite>) =>
      graph.projector.projection(async (tx) => {
        await tx.lockCheckpoint(topic, 0);
        await tx.write({ records: [], entities: [], receipts: [], episodes: [], grants: [], ...w });
        await tx.setCheckpoint(topic, 0, ++offset);
      }),
    async cleanup(): Promise<void> {
      await db.write('contract.cleanup', 'MATCH (n {tenant: $t}) DETACH DELETE n', { t: tenant });
      await db.write('contract.cleanup', 'MATCH (c:Checkpoint {topic: $topic}) DELETE c', { topic });
      await db.close();
    },
  };
}
