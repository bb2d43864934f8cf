import { randomUUID } from 'node:crypto';
import type { Record as Neo4jRecord } from 'neo4j-driver';
import { canonicalJson } from '../../domain/canonical.ts';
import { MultisetHash } from '../../domain/multiset-hash.ts';
import type { EmbeddingModelCount, GraphAdmin } from '../../ports/graph.ts';
import type { Executor } from './executor.ts';
import { withMigrationLock } from './migration-lock.ts';
import { applyMigrations, migrationsApplied } from './migrations.ts';
import { LOCK_CHECKPOINT } from './projection-store.ts';
import { scopeTerms } from './scope.ts';

/** A node's stable key in the canonical dump (records, entities, episodes by id; revisions and chunks by parent). */
const NODE_KEY = (v: string) =>
  `coalesce(${v}.id, ${v}.recordId + '#' + toString(${v}.version), ${v}.episodeId + '#' + toString(${v}.index))`;

/**
 * A node's properties as domain state: a record's `stamp` is projection bookkeeping (which transaction
 * wrote it last, for scope-vectors.ts), so a rebuild that batches differently still hashes the same.
 */
function domainProps(p: Record<string, unknown>): Record<string, unknown> {
  const { stamp: _stamp, ...rest } = p;
  return rest;
}

/*
 * Canonical dump: every domain node as label + sorted properties, every relationship between domain
 * nodes as (start key, type, end key, properties). Checkpoints and migration bookkeeping are not domain
 * state.
 */
const STATE_NODES = `MATCH (n) WHERE n:Record OR n:Revision OR n:Entity OR n:Receipt OR n:Episode OR n:Chunk OR n:Grant
    OR n:Hold OR n:Finding
  RETURN labels(n) AS l, properties(n) AS p`;
const STATE_RELS = `MATCH (a)-[r]->(b)
  WHERE (a:Record OR a:Revision OR a:Entity OR a:Episode OR a:Chunk)
    AND (b:Record OR b:Revision OR b:Entity OR b:Episode OR b:Chunk)
  RETURN labels(a) AS la, a.tenant AS ta, ${NODE_KEY('a')} AS ka, type(r) AS t, properties(r) AS p,
         labels(b) AS lb, b.tenant AS tb, ${NODE_KEY('b')} AS kb`;

const nodeLine = (r: Neo4jRecord): string =>
  'N' + canonicalJson({ l: [...(r.get('l') as string[])].sort(), p: domainProps(r.get('p')) });

const relLine = (r: Neo4jRecord): string =>
  'R' +
  canonicalJson({
    a: [r.get('la'), r.get('ta'), r.get('ka')],
    t: r.get('t'),
    p: r.get('p'),
    b: [r.get('lb'), r.get('tb'), r.get('kb')],
  });

/** Operating the database: migrations, health, the test-database mark, the state hash, wipe and close. */
export class Neo4jGraphAdmin implements GraphAdmin {
  constructor(private readonly db: Executor) {}

  /** One process at a time (see migration-lock.ts): the schema statements and the backfill, then release. */
  async migrate(): Promise<{ applied: string[] }> {
    return withMigrationLock(this.db, async () => {
      const applied = await applyMigrations(this.db);
      await this.backfillScopeTerms();
      return { applied };
    });
  }

  /**
   * Records projected before migration 009 get their scope terms (one write per namespace), once: a
   * Migration node marks it done, so a start does not scan every record again.
   */
  private async backfillScopeTerms(): Promise<void> {
    const done = await this.db.read(
      'migrations.scopeTermsDone',
      `MATCH (m:Migration {id: 'backfill.scopeTerms'}) RETURN count(m) AS c`,
    );
    if (Number(done.records[0]?.get('c') ?? 0) > 0) return;
    const res = await this.db.read(
      'migrations.scopeTermsMissing',
      `MATCH (n:Record) WHERE n.scopeTerms IS NULL RETURN DISTINCT n.tenant AS tenant, n.namespace AS ns`,
    );
    for (const r of res.records) {
      const tenant = String(r.get('tenant'));
      const ns = String(r.get('ns'));
      await this.db.write(
        'migrations.scopeTerms',
        `MATCH (n:Record) WHERE n.tenant = $tenant AND n.namespace = $ns AND n.scopeTerms IS NULL
         SET n.scopeTerms = $terms`,
        { tenant, ns, terms: scopeTerms(tenant, ns) },
      );
    }
    await this.db.write('migrations.record', `MERGE (m:Migration {id: 'backfill.scopeTerms'})`);
  }

  migrationsApplied(): Promise<boolean> {
    return migrationsApplied(this.db);
  }

  ping(): Promise<void> {
    return this.db.ping();
  }

  async isTestDatabase(): Promise<boolean> {
    const res = await this.db.read('marker.test', 'MATCH (m:TestDatabase {id: 1}) RETURN count(m) AS c');
    return Number(res.records[0]?.get('c') ?? 0) > 0;
  }

  async markTestDatabase(marked: boolean): Promise<void> {
    await this.db.write(
      'marker.mark',
      marked ? 'MERGE (m:TestDatabase {id: 1})' : 'MATCH (m:TestDatabase {id: 1}) DELETE m',
    );
  }

  async embeddingModels(tenant?: string): Promise<EmbeddingModelCount[]> {
    const res = await this.db.read(
      'admin.embeddingModels',
      `CALL () {
         MATCH (n:Record) WHERE n.embeddingModel IS NOT NULL AND ($tenant IS NULL OR n.tenant = $tenant)
         RETURN n.embeddingModel AS model, 'records' AS kind, count(*) AS c
         UNION ALL
         MATCH (n:Entity) WHERE n.embeddingModel IS NOT NULL AND ($tenant IS NULL OR n.tenant = $tenant)
         RETURN n.embeddingModel AS model, 'entities' AS kind, count(*) AS c
       }
       RETURN model, kind, c ORDER BY model`,
      { tenant: tenant ?? null },
    );
    const by = new Map<string, { modelId: string; records: number; entities: number }>();
    for (const r of res.records) {
      const modelId = String(r.get('model'));
      const row = by.get(modelId) ?? { modelId, records: 0, entities: 0 };
      row[r.get('kind') as 'records' | 'entities'] = Number(r.get('c'));
      by.set(modelId, row);
    }
    return [...by.values()];
  }

  /**
   * The digest of the canonical dump (`stateLines`), as a multiset: the same for two graphs holding the
   * same domain state, however either was written. The dump streams through, a row at a time.
   */
  async stateHash(): Promise<{ hash: string; nodes: number; relationships: number }> {
    const hash = new MultisetHash();
    const nodes = await this.db.stream('state.nodes', STATE_NODES, {}, (r) => hash.add(nodeLine(r)));
    const relationships = await this.db.stream('state.rels', STATE_RELS, {}, (r) => hash.add(relLine(r)));
    return { hash: hash.digest(), nodes, relationships };
  }

  /** The canonical dump the state hash is taken over, sorted: where two graphs differ, when they do. */
  async stateLines(): Promise<{ lines: string[]; nodes: number; relationships: number }> {
    const nodes = await this.db.read('state.nodes', STATE_NODES);
    const rels = await this.db.read('state.rels', STATE_RELS);
    const lines = [...nodes.records.map(nodeLine), ...rels.records.map(relLine)].sort();
    return { lines, nodes: nodes.records.length, relationships: rels.records.length };
  }

  async wipe(): Promise<void> {
    for (;;) {
      const res = await this.db.write(
        'state.wipe',
        `MATCH (n) WHERE n:Record OR n:Revision OR n:Entity OR n:Receipt OR n:Checkpoint OR n:Episode OR n:Chunk
           OR n:Grant OR n:Hold OR n:Finding OR n:ScopeStamp
         WITH n LIMIT 10000 DETACH DELETE n RETURN count(*) AS c`,
      );
      if (Number(res.records[0]?.get('c') ?? 0) === 0) return;
    }
  }

  /**
   * The fence is set in one transaction that then takes the lock of each partition's checkpoint (creating
   * those not there yet, under their key's constraint): it waits for every projection transaction running,
   * and each later one, taking its checkpoint's lock first, reads the fence whole (projection-store.ts).
   * The node is not domain state: the wipe keeps it and the state hash leaves it out.
   */
  async fenceProjection(topic: string, partitions: number): Promise<string> {
    const id = randomUUID();
    await this.db.write(
      'projection.fence',
      `MERGE (f:ProjectionFence {topic: $topic})
       SET f.id = $id, f.since = $since
       WITH f
       UNWIND $partitions AS p
       MERGE (c:Checkpoint {topic: $topic, partition: p})
       ON CREATE SET c.offset = -1
       ${LOCK_CHECKPOINT('p')}
       RETURN count(c) AS c`,
      {
        topic,
        id,
        since: new Date().toISOString(),
        partitions: Array.from({ length: partitions }, (_, p) => p),
      },
    );
    return id;
  }

  async liftProjectionFence(topic: string, fence: string): Promise<void> {
    await this.db.write(
      'projection.unfence',
      'MATCH (f:ProjectionFence {topic: $topic, id: $fence}) DELETE f',
      { topic, fence },
    );
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
