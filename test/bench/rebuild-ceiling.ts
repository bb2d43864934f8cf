import { randomUUID } from 'node:crypto';
import type { LedgerEvent } from '../../src/domain/events.ts';
import { MemoryState } from '../../src/domain/memory-state.ts';
import type { Executor } from '../../src/adapters/neo4j/executor.ts';
import { recordRow } from '../../src/adapters/neo4j/mapping.ts';

/**
 * What Neo4j itself accepts for a rebuild's rows, without Muninn around it: the rows the projector writes
 * for `n` proposals (a record with its revision and receipt: the fold and the adapter's own mapping), sent
 * in transactions of `batch` rows by four statements of falling cost. The gap between them says where a
 * replay's graph time goes; the first says what no Cypher replay can beat on this machine.
 *  - send: the rows go to Neo4j and are counted (Bolt and parameter decoding only);
 *  - keys: the same nodes and relationship with one property each, under labels no index covers;
 *  - bare: three nodes and a relationship per row, every property, under labels no index covers;
 *  - create: the same under the real labels (every range, fulltext and lookup index kept up);
 *  - merge: MERGE by key, as the projector writes (it cannot know a node is new).
 * The nodes are written under tenants of their own and deleted after each statement.
 */
export async function rebuildCeiling(
  db: Executor,
  events: readonly LedgerEvent[],
  batch: number,
  neo4jCpu: () => number | null,
): Promise<void> {
  const state = new MemoryState();
  for (const e of events) state.apply(e);
  const changes = state.changes();
  const receipts = new Map(changes.receipts.map((r) => [`${r.tenant}\u0000${r.recordId}`, r]));
  const tag = `ceiling-${randomUUID().slice(0, 6)}`;
  const rows = changes.records.map((r) => {
    const row = recordRow(r);
    const tenant = `${tag}-${r.tenant}`;
    return {
      props: { ...row.props, tenant, id: r.id, stamp: 1 },
      rev: { ...row.revisions[0], tenant, recordId: r.id },
      rc: { ...receipts.get(`${r.tenant}\u0000${r.id}`), tenant },
    };
  });
  const rel = 'CREATE (n)-[:HAS_REVISION]->(v)';
  const statements: Record<string, string> = {
    send: 'UNWIND $rows AS r RETURN count(*) AS c',
    keys: `UNWIND $rows AS r CREATE (n:CeilingRecord {id: r.props.id}) CREATE (v:CeilingRevision {id: r.rev.eventId}) ${rel} CREATE (rc:CeilingReceipt {id: r.rc.idempotencyKey})`,
    bare: `UNWIND $rows AS r CREATE (n:CeilingRecord) SET n = r.props CREATE (v:CeilingRevision) SET v = r.rev ${rel} CREATE (rc:CeilingReceipt) SET rc = r.rc`,
    create: `UNWIND $rows AS r CREATE (n:Record) SET n = r.props CREATE (v:Revision) SET v = r.rev ${rel} CREATE (rc:Receipt) SET rc = r.rc`,
    merge: `UNWIND $rows AS r MERGE (n:Record {tenant: r.props.tenant, id: r.props.id}) SET n += r.props
      MERGE (v:Revision {tenant: r.rev.tenant, recordId: r.rev.recordId, version: r.rev.version}) SET v += r.rev
      MERGE (n)-[:HAS_REVISION]->(v)
      MERGE (rc:Receipt {tenant: r.rc.tenant, idempotencyKey: r.rc.idempotencyKey}) SET rc += r.rc`,
  };
  console.log(
    `Neo4j's own ceiling for these rows (${rows.length} rows of 3 nodes, ${batch} per transaction):`,
  );
  for (const [name, cypher] of Object.entries(statements)) {
    const c0 = neo4jCpu();
    const t0 = performance.now();
    for (let i = 0; i < rows.length; i += batch)
      await db.writeTx('bench.ceiling', (tx) => tx.run(cypher, { rows: rows.slice(i, i + batch) }));
    const s = (performance.now() - t0) / 1000;
    const c1 = neo4jCpu();
    const neo4j = c0 === null || c1 === null ? '' : `; Neo4j ${((c1 - c0) / s).toFixed(2)} cores`;
    console.log(`  ${name.padEnd(7)} ${Math.round(rows.length / s)} rows/s (${s.toFixed(2)} s${neo4j})`);
    await db.autoCommit(
      'bench.ceiling.clean',
      `MATCH (n) WHERE n.tenant STARTS WITH $tag CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS`,
      { tag },
    );
  }
}
