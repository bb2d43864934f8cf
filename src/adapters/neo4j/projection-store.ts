import type { EntityState, RecordState } from '../../domain/fold.ts';
import type {
  Checkpoint,
  LoadedState,
  ProjectionStore,
  ProjectionTx,
  ProjectionWrite,
  StateKeys,
} from '../../ports/graph.ts';
import { MuninnError } from '../../domain/errors.ts';
import { relType, type Executor, type Tx } from './executor.ts';
import { ENTITY_STAMP, namespaceKey, SAME_AS_STAMP } from './scope.ts';
import {
  episodeRow,
  recordRow,
  relationProps,
  RELATION_TYPES,
  toEntity,
  toEpisode,
  toFinding,
  toGrant,
  toHold,
  toReceipt,
  toRecordState,
  type Props,
} from './mapping.ts';

/** Records by key ($keys: {tenant, id}) as `toRecordState` reads them; the rollback planner reads the same. */
export const LOAD_RECORDS = `UNWIND $keys AS k MATCH (n:Record {tenant: k.tenant, id: k.id})
         RETURN n,
           COLLECT { MATCH (n)-[:HAS_REVISION]->(v:Revision) RETURN v ORDER BY v.version } AS vs,
           COLLECT { MATCH (n)-[r:${RELATION_TYPES.map(relType).join('|')}]->(t)
                     WHERE r.eventId IS NOT NULL AND (t:Record OR t:Entity)
                     RETURN {type: type(r), target: t.id, kind: CASE WHEN t:Entity THEN 'ENTITY' ELSE 'RECORD' END,
                             props: properties(r)} AS rel ORDER BY rel.props.eventId } AS rels`;

/**
 * Takes the write lock of checkpoint `c` inside a statement, with a property of its own set then removed:
 * `SET c.offset = c.offset` read the offset before it waited, and wrote that old value back
 * (test/contract/checkpoint-lock.test.ts). What the statement reads of `c` after this is what the lock's
 * last holder left, applied whole.
 */
export const LOCK_CHECKPOINT = (by: string): string => `SET c.lockedBy = ${by}
       REMOVE c.lockedBy`;

/** The only writer of the graph: one write transaction per batch (the projector, a rebuild), and the checkpoints. */
export class Neo4jProjectionStore implements ProjectionStore {
  constructor(private readonly db: Executor) {}

  projection<T>(fn: (tx: ProjectionTx) => Promise<T>): Promise<T> {
    return this.db.writeTx('projector.apply', (tx) => fn(new Neo4jProjectionTx(tx)));
  }

  async checkpoints(topic: string): Promise<Checkpoint[]> {
    const res = await this.db.read(
      'checkpoints.list',
      'MATCH (c:Checkpoint {topic: $topic}) RETURN c.partition AS p, c.offset AS o ORDER BY p',
      {
        topic,
      },
    );
    return res.records.map((r) => ({ topic, partition: Number(r.get('p')), offset: String(r.get('o')) }));
  }

  /**
   * The checkpoints, each read after taking its lock (in partition order, as every reader takes them):
   * a projection transaction holds its partition's from its first statement until it is applied, so the
   * offset read is one whose records can be read (a plain read showed the checkpoint before the record of
   * its transaction 50–91 times in 400 tight polls here: test/contract/checkpoint-applied.test.ts).
   */
  async checkpointsApplied(topic: string): Promise<Checkpoint[]> {
    const res = await this.db.lockedRead(
      'checkpoints.applied',
      `MATCH (c:Checkpoint {topic: $topic})
       WITH c ORDER BY c.partition
       ${LOCK_CHECKPOINT('c.partition')}
       RETURN c.partition AS p, c.offset AS o`,
      { topic },
    );
    return res.records.map((r) => ({ topic, partition: Number(r.get('p')), offset: String(r.get('o')) }));
  }
}

class Neo4jProjectionTx implements ProjectionTx {
  constructor(private readonly tx: Tx) {}

  async lockCheckpoint(topic: string, partition: number, fence?: string): Promise<bigint> {
    // The lock: a second projector on the same partition waits here, and only then reads the offset
    // (RETURN), so it sees what the other committed and skips it. A rebuild's fence is read after the
    // lock: the fence was set under every checkpoint's lock (admin.ts), so it is seen whole.
    const res = await this.tx.run(
      `MERGE (c:Checkpoint {topic: $topic, partition: $partition})
       ON CREATE SET c.offset = -1
       ${LOCK_CHECKPOINT('$partition')}
       WITH c
       OPTIONAL MATCH (f:ProjectionFence {topic: $topic})
       RETURN c.offset AS o, f.id AS fence, f.since AS since`,
      { topic, partition },
    );
    const row = res.records[0]!;
    const held = row.get('fence') as string | null;
    if (fence !== undefined && held !== fence)
      // A rebuild whose fence another took over stops: the newer one replays the ledger again.
      throw new MuninnError('UNAVAILABLE', `this rebuild's fence on ${topic} was taken over`, {
        fence,
        held,
      });
    if (fence === undefined && held !== null)
      throw new MuninnError(
        'UNAVAILABLE',
        `the projection of ${topic} is fenced by a rebuild (${held}, since ${String(row.get('since'))}); ` +
          'it resumes when that rebuild has replayed the ledger (if it died, run `muninn rebuild` again)',
        { fence: held },
      );
    return BigInt(row.get('o') as number);
  }

  async setCheckpoint(topic: string, partition: number, offset: bigint): Promise<void> {
    await this.tx.run(
      `MATCH (c:Checkpoint {topic: $topic, partition: $partition})
       SET c.offset = CASE WHEN c.offset < $offset THEN $offset ELSE c.offset END`,
      { topic, partition, offset: Number(offset) },
    );
  }

  async load(keys: StateKeys): Promise<LoadedState> {
    const run = (cypher: string, rows: readonly object[]) =>
      rows.length ? this.tx.run(cypher, { keys: rows }) : null;
    const [records, entities, receipts, episodes, grants, holds, findings] = await Promise.all([
      run(LOAD_RECORDS, keys.records),
      run(
        `UNWIND $keys AS k MATCH (e:Entity {tenant: k.tenant, id: k.id})
         OPTIONAL MATCH (e)-[s:SAME_AS]->(o:Entity) RETURN e, o.id AS sameAs, s.confidence AS sameAsConfidence`,
        keys.entities,
      ),
      run(
        'UNWIND $keys AS k MATCH (r:Receipt {tenant: k.tenant, idempotencyKey: k.idempotencyKey}) RETURN r',
        keys.receipts,
      ),
      run('UNWIND $keys AS k MATCH (ep:Episode {tenant: k.tenant, id: k.id}) RETURN ep', keys.episodes),
      run('UNWIND $keys AS k MATCH (g:Grant {tenant: k.tenant, id: k.id}) RETURN g', keys.grants ?? []),
      run('UNWIND $keys AS k MATCH (h:Hold {tenant: k.tenant, id: k.id}) RETURN h', keys.holds ?? []),
      run('UNWIND $keys AS k MATCH (f:Finding {tenant: k.tenant, id: k.id}) RETURN f', keys.findings ?? []),
    ]);
    return {
      records: records?.records.map(toRecordState) ?? [],
      entities:
        entities?.records.map((r) =>
          toEntity(
            r.get('e').properties,
            r.get('sameAs')
              ? { entityId: String(r.get('sameAs')), confidence: Number(r.get('sameAsConfidence')) }
              : null,
          ),
        ) ?? [],
      receipts: receipts?.records.map((r) => toReceipt(r.get('r').properties)) ?? [],
      episodes: episodes?.records.map((r) => toEpisode(r.get('ep').properties)) ?? [],
      grants: grants?.records.map((r) => toGrant(r.get('g').properties)) ?? [],
      holds: holds?.records.map((r) => toHold(r.get('h').properties as Props)) ?? [],
      findings: findings?.records.map((r) => toFinding(r.get('f').properties as Props)) ?? [],
    };
  }

  /**
   * Sends every statement of the write before awaiting any (see ProjectionTx): they run in the order sent,
   * so the erased receipts' reasons are cleared before this batch's receipts are written, episodes and
   * entities exist before the records that point at them, and a namespace's stamp is bumped before its
   * records read it.
   */
  write(w: ProjectionWrite): Promise<void> {
    const sent: Array<Promise<unknown>> = [];
    try {
      this.send(w, (cypher, params) => sent.push(this.tx.run(cypher, params)));
    } catch (e) {
      // A row that cannot be built stops the write; what was already sent must not reject unobserved.
      void Promise.allSettled(sent);
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
    return Promise.all(sent).then(() => undefined);
  }

  private send(w: ProjectionWrite, run: Send): void {
    const erasedRecords = (w.erasures ?? []).filter((x) => x.target === 'RECORD');
    if (erasedRecords.length) {
      // Before this batch's receipts are written: those of earlier batches may quote the erased content.
      run(
        `UNWIND $rows AS x MATCH (rc:Receipt {tenant: x.tenant, recordId: x.id})
         WHERE rc.reason IS NOT NULL SET rc.reason = null`,
        { rows: erasedRecords.map((x) => ({ tenant: x.tenant, id: x.id })) },
      );
    }
    if (w.episodes.length) {
      run(
        `UNWIND $rows AS e MERGE (ep:Episode {tenant: e.tenant, id: e.id}) SET ep += e.props
         WITH ep, e UNWIND e.chunks AS c
         MERGE (ch:Chunk {tenant: e.tenant, episodeId: e.id, index: c.index})
         SET ch.start = c.start, ch.end = c.end, ch.text = substring(e.props.text, c.start, c.end - c.start)
         MERGE (ch)-[:PART_OF]->(ep)`,
        { rows: w.episodes.map(episodeRow) },
      );
    }
    if (w.entities.length) this.writeEntities(w.entities, run);
    if (w.records.length) this.writeRecords(w.records, w.unchangedRevisions, run);
    if (w.holds?.length) {
      run(`UNWIND $rows AS h MERGE (n:Hold {tenant: h.tenant, id: h.id}) SET n += h`, {
        rows: w.holds.map((h) => ({ ...h })),
      });
    }
    if (w.findings?.length) {
      run(`UNWIND $rows AS f MERGE (n:Finding {tenant: f.tenant, id: f.id}) SET n += f`, {
        rows: w.findings.map((f) => ({ ...f, recordIds: [...f.recordIds], entityIds: [...f.entityIds] })),
      });
    }
    if (w.grants.length) {
      run(`UNWIND $rows AS g MERGE (n:Grant {tenant: g.tenant, id: g.id}) SET n += g`, {
        rows: w.grants.map((g) => ({ ...g, purposes: g.purposes ? [...g.purposes] : null })),
      });
    }
    if (w.receipts.length) {
      run(
        `UNWIND $rows AS r MERGE (n:Receipt {tenant: r.tenant, idempotencyKey: r.idempotencyKey}) SET n += r`,
        { rows: w.receipts.map((r) => ({ ...r })) },
      );
    }
  }

  /**
   * Entities with their SAME_AS links. First each tenant's entity stamp is bumped (sorted, so two
   * transactions lock them in the same order, before any namespace's); each entity then takes its tenant's
   * new number (entity-held.ts).
   */
  private writeEntities(entities: readonly EntityState[], run: Send): void {
    run(
      `UNWIND $tenants AS t
         MERGE (st:ScopeStamp {tenant: t, namespace: $stamp})
         ON CREATE SET st.epoch = randomUUID(), st.seq = 0
         SET st.seq = st.seq + 1`,
      { tenants: [...new Set(entities.map((e) => e.tenant))].sort(), stamp: ENTITY_STAMP },
    );
    run(
      `UNWIND $rows AS e
         MATCH (st:ScopeStamp {tenant: e.tenant, namespace: $stamp})
         MERGE (n:Entity {tenant: e.tenant, id: e.id})
         SET n.name = e.name, n.type = e.type, n.aliases = e.aliases, n.externalIds = e.externalIds,
             n.embedding = e.embedding, n.embeddingModel = e.embeddingModel, n.stamp = st.seq
         WITH n, e WHERE e.sameAs IS NOT NULL
         MATCH (o:Entity {tenant: e.tenant, id: e.sameAs.entityId})
         MERGE (n)-[s:SAME_AS]->(o) SET s.confidence = e.sameAs.confidence, s.tentative = true`,
      {
        stamp: ENTITY_STAMP,
        rows: entities.map((e) => ({
          tenant: e.tenant,
          id: e.id,
          name: e.name,
          type: e.type,
          aliases: [...e.aliases],
          externalIds: [...e.externalIds],
          embedding: e.embedding?.vector ?? null,
          embeddingModel: e.embedding?.modelId ?? null,
          sameAs: e.sameAs,
        })),
      },
    );
    // SAME_AS changes no record, so no namespace's stamp: the tenant's link stamp moves (scope.ts).
    const linked = [...new Set(entities.filter((e) => e.sameAs).map((e) => e.tenant))].sort();
    if (linked.length)
      run(
        `UNWIND $tenants AS t
           MERGE (st:ScopeStamp {tenant: t, namespace: $links})
           ON CREATE SET st.epoch = randomUUID(), st.seq = 0
           SET st.seq = st.seq + 1`,
        { tenants: linked, links: SAME_AS_STAMP },
      );
  }

  /**
   * Records with their revisions (those the batch changed), ABOUT and DERIVED_FROM edges, then their
   * typed relations. First the stamp of each namespace the batch writes records in is bumped (sorted, so
   * two transactions lock them in the same order); each record then takes its namespace's new number
   * (scope-vectors.ts).
   */
  private writeRecords(
    records: readonly RecordState[],
    unchanged: ProjectionWrite['unchangedRevisions'],
    run: Send,
  ): void {
    const scopes = [...new Map(records.map((r) => [namespaceKey(r.tenant, r.namespace), r])).entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([, r]) => ({ tenant: r.tenant, namespace: r.namespace }));
    run(
      `UNWIND $scopes AS s
         MERGE (st:ScopeStamp {tenant: s.tenant, namespace: s.namespace})
         ON CREATE SET st.epoch = randomUUID(), st.seq = 0
         SET st.seq = st.seq + 1`,
      { scopes },
    );
    run(
      `UNWIND $rows AS r
         MATCH (st:ScopeStamp {tenant: r.tenant, namespace: r.props.namespace})
         MERGE (n:Record {tenant: r.tenant, id: r.id})
         SET n += r.props, n.stamp = st.seq
         WITH n, r
         CALL (n, r) {
           UNWIND r.revisions AS rv
           MERGE (v:Revision {tenant: r.tenant, recordId: r.id, version: rv.version})
           SET v += rv
           MERGE (n)-[:HAS_REVISION]->(v)
         }
         CALL (n, r) {
           UNWIND r.about AS eid
           MATCH (e:Entity {tenant: r.tenant, id: eid})
           MERGE (n)-[:ABOUT]->(e)
         }
         WITH n, r WHERE r.props.episodeId IS NOT NULL
         MATCH (ep:Episode {tenant: r.tenant, id: r.props.episodeId})
         MERGE (n)-[:DERIVED_FROM]->(ep)`,
      { rows: records.map((r) => recordRow(r, unchanged?.get(r))) },
    );
    this.writeRecordLinks(records, run);
  }

  /** The records' DERIVED_FROM edges to other records, then their typed relations. */
  private writeRecordLinks(records: readonly RecordState[], run: Send): void {
    // Record → record derivation (propose's derivedFrom): the taint walk of a rollback follows these.
    const derived = records.flatMap((r) =>
      (r.derivedFrom ?? []).map((target) => ({ tenant: r.tenant, id: r.id, target })),
    );
    if (derived.length)
      run(
        `UNWIND $rows AS x
           MATCH (a:Record {tenant: x.tenant, id: x.id}), (b:Record {tenant: x.tenant, id: x.target})
           MERGE (a)-[:DERIVED_FROM]->(b)`,
        { rows: derived },
      );
    // Relationship types and labels cannot be parameters: one statement per allow-listed type and kind.
    for (const type of RELATION_TYPES)
      for (const kind of ['Record', 'Entity'] as const) {
        const rows = records.flatMap((r) =>
          r.relations
            .filter((x) => x.type === type && (x.targetKind === 'ENTITY') === (kind === 'Entity'))
            .map((x) => ({ tenant: r.tenant, id: r.id, target: x.target, props: relationProps(x) })),
        );
        if (rows.length)
          run(
            `UNWIND $rows AS x
               MATCH (a:Record {tenant: x.tenant, id: x.id}), (b:${kind} {tenant: x.tenant, id: x.target})
               MERGE (a)-[rel:${relType(type)}]->(b) SET rel += x.props`,
            { rows },
          );
      }
  }
}

/** Sends one statement of the transaction now; its result is awaited with the rest (ProjectionTx). */
type Send = (cypher: string, params: Record<string, unknown>) => void;
