import type { Executor } from './executor.ts';
import { Coalesced } from './coalesce.ts';
import { HeldRows } from './ranked-memo.ts';
import { ENTITY_STAMP, namespaceKey } from './scope.ts';
import { StampSettling } from './stamp-settling.ts';
import { Ranking, Shard } from './vector-shards.ts';

/**
 * What entity resolution and recall's anchors may match, per tenant, held in process: each entity's keys
 * (its id, its external ids, its lower-cased name and its aliases) and its vector. Neo4j still decides:
 * the candidates found here are read back by id (an index seek) under the original predicate and the one
 * entity visibility filter, so what matches is what a scan would have matched, only found without one.
 *
 * Why: exact matches by name, alias or external id cannot seek (Neo4j 5 indexes a list property as one
 * value, and a lower-cased name is not stored), and the nearest entity was an exact cosine over every
 * entity of the tenant, so each probe read them all: 0.72 s for a write naming four entities at 10,000
 * (bench:entities before this module; 8.7 ms after), and every write that names an entity sends probes.
 *
 * Freshness, as the record vectors' (scope-vectors.ts): the projection bumps the tenant's entity stamp
 * (ScopeStamp '#entities': a random epoch when created, a number bumped in each transaction that writes
 * the tenant's entities) and stamps each entity it writes with the new number. A lookup reads the stamp
 * first, then loads the entities stamped since the index it holds (all of them when the epoch differs: a
 * wiped and rebuilt graph), so it sees every entity committed before it started. An index read at stamp N
 * counts as complete through N − 1 until N settles (stamp-settling.ts). Erasure writes the entity
 * without its name, aliases, external ids and embedding, so the next lookup drops them here too; an index
 * unused for IDLE_MS is dropped whole. Bounded by MUNINN_ENTITIES_HELD: the least recently used tenants go
 * first, and a tenant larger than the bound is read whole by each lookup instead of being kept.
 */
export class EntityIndex {
  readonly vectors: Shard;
  /** The stamp number its last load was asked at (`seq` is what it is complete through: up to one less). */
  readSeq = -1;
  private readonly idsOf = new Map<string, Set<string>>();
  private readonly keysOf = new Map<string, readonly string[]>();

  constructor(
    readonly epoch: string,
    public seq: number,
  ) {
    this.vectors = new Shard(epoch, seq);
  }

  get size(): number {
    return this.keysOf.size;
  }

  /** Replace each row's keys and vector. */
  apply(rows: readonly EntityRow[]): void {
    for (const r of rows) {
      for (const k of this.keysOf.get(r.id) ?? []) {
        const ids = this.idsOf.get(k)!;
        ids.delete(r.id);
        if (ids.size === 0) this.idsOf.delete(k);
      }
      const keys = [
        ...new Set([
          ...r.externalIds.map(extKey),
          ...(r.name ? [aliasKey(r.name.toLowerCase())] : []),
          ...r.aliases.map(aliasKey),
        ]),
      ];
      this.keysOf.set(r.id, keys);
      for (const k of keys) {
        const ids = this.idsOf.get(k);
        if (ids) ids.add(r.id);
        else this.idsOf.set(k, new Set([r.id]));
      }
    }
    this.vectors.apply(rows);
  }

  /** The entities that may match a probe exactly (by id, external id, or a lower-cased name or alias), sorted. */
  candidates(p: { id?: string | null; ext?: string | null; alias?: string | null }): string[] {
    const out = new Set<string>();
    if (p.id && this.keysOf.has(p.id)) out.add(p.id);
    for (const id of p.ext ? (this.idsOf.get(extKey(p.ext)) ?? []) : []) out.add(id);
    for (const id of p.alias ? (this.idsOf.get(aliasKey(p.alias)) ?? []) : []) out.add(id);
    return [...out].sort();
  }

  /** Each entity named by one of the (lower-cased) phrases, by name or alias, sorted. */
  named(phrases: readonly string[]): string[] {
    return [...new Set(phrases.flatMap((p) => [...(this.idsOf.get(aliasKey(p)) ?? [])]))].sort();
  }

  /** The entities of `model` by cosine to `vector`, ties by id (vector-shards.ts). */
  ranking(model: string, vector: readonly number[]): Ranking {
    return new Ranking([this.vectors], model, vector);
  }
}

/** One entity as a load reads it (an erased one: the erasure mark as name, no aliases, ids or vector). */
export interface EntityRow {
  readonly id: string;
  readonly name: string | null;
  readonly aliases: readonly string[];
  readonly externalIds: readonly string[];
  readonly model: string | null;
  readonly vector: readonly number[] | null;
}

const extKey = (ext: string) => `x\u0000${ext}`;
const aliasKey = (alias: string) => `a\u0000${alias}`;

/** The load of a tenant's entities stamped after `since` (-1: all), by the index on (tenant, stamp). */
export const ENTITY_LOAD = `MATCH (e:Entity) USING INDEX SEEK e:Entity(tenant, stamp)
       WHERE e.tenant = $tenant AND e.stamp > $since
       RETURN e.id AS id, e.name AS name, e.aliases AS aliases, e.externalIds AS externalIds,
         e.embeddingModel AS model, e.embedding AS vector`;

type TenantStamp = { epoch: string; seq: number } | null;

/** The entity indexes of the tenants a process resolves entities for, each brought up to its stamp. */
export class HeldEntities {
  /** MUNINN_ENTITIES_HELD's default: most entities held across tenants (~1.7 KiB each at 384 dimensions). */
  static readonly DEFAULT_HELD = 100_000;
  /** An index unused this long is dropped (HeldRows' idle timer). */
  static readonly IDLE_MS = 5 * 60_000;
  /** Held indexes, at most maxHeld entities in all, least recently used dropped first. */
  private readonly byTenant: HeldRows<EntityIndex>;
  private readonly loading = new Map<string, Promise<EntityIndex>>();
  private readonly stamps: Coalesced<string, TenantStamp>;

  constructor(
    private readonly db: Executor,
    /** Most entities held at once across tenants (MUNINN_ENTITIES_HELD); 0 keeps none between calls. */
    readonly maxHeld = HeldEntities.DEFAULT_HELD,
    private readonly settling = new StampSettling(),
  ) {
    this.byTenant = new HeldRows(maxHeld, (index) => index.size, HeldEntities.IDLE_MS);
    this.stamps = new Coalesced(
      (tenants) =>
        stampsOf(db, tenants).then((read) => {
          settling.seen(read.flatMap((s, i) => (s ? [{ key: stampKey(tenants[i]!), ...s }] : [])));
          return read;
        }),
      (t) => t,
    );
  }

  /** The tenant's index as held now, if any: it may be behind the graph (compare its stamp). */
  held(tenant: string): EntityIndex | undefined {
    return this.byTenant.get(tenant);
  }

  /**
   * The tenant's index with every entity committed before this call. A tenant with more entities than
   * maxHeld is loaded whole for each call and never kept: slow, but a process's memory stays bounded.
   */
  async of(tenant: string): Promise<EntityIndex> {
    const stamp = await this.stamps.read(tenant);
    if (!stamp) return new EntityIndex('', 0); // no entity was ever written in the tenant
    const current = (x: EntityIndex | undefined): x is EntityIndex =>
      x !== undefined && x.epoch === stamp.epoch && x.seq >= stamp.seq;
    for (;;) {
      const held = this.byTenant.get(tenant);
      if (current(held)) return held;
      const running = this.loading.get(tenant);
      if (running) {
        // Read at this caller's stamp or a later one: as fresh as a load of its own would be now.
        const loaded = await running;
        if (loaded.epoch === stamp.epoch && loaded.readSeq >= stamp.seq) return loaded;
        continue;
      }
      const load = this.load(tenant, stamp).finally(() => this.loading.delete(tenant));
      this.loading.set(tenant, load);
      return load;
    }
  }

  /** Brings the tenant's index up to `stamp`: the entities stamped since the one held, or all of them. */
  private async load(tenant: string, stamp: { epoch: string; seq: number }): Promise<EntityIndex> {
    const before = this.byTenant.get(tenant);
    const index = before && before.epoch === stamp.epoch ? before : new EntityIndex(stamp.epoch, -1);
    const through = this.settling.completeThrough({ key: stampKey(tenant), ...stamp });
    const res = await this.db.read('entity.load', ENTITY_LOAD, { tenant, since: index.seq });
    index.apply(
      res.records.map((r) => ({
        id: String(r.get('id')),
        name: r.get('name') as string | null,
        aliases: (r.get('aliases') as string[] | null) ?? [],
        externalIds: (r.get('externalIds') as string[] | null) ?? [],
        model: r.get('model') as string | null,
        vector: r.get('vector') as number[] | null,
      })),
    );
    // The stamp read before the load (less one until it settles): what is stamped later is loaded again
    // next time (idempotent).
    index.seq = Math.max(index.seq, through);
    index.readSeq = Math.max(index.readSeq, stamp.seq);
    this.byTenant.set(tenant, index); // not held when larger than maxHeld: used by its callers, then let go
    return index;
  }
}

/** The entity stamp's key among the stamps a process has seen (stamp-settling.ts). */
const stampKey = (tenant: string): string => namespaceKey(tenant, ENTITY_STAMP);

/** Each tenant's entity stamp, one statement; null where the tenant has none. */
async function stampsOf(db: Executor, tenants: readonly string[]): Promise<TenantStamp[]> {
  const res = await db.read(
    'entity.stamps',
    `UNWIND range(0, size($tenants) - 1) AS i
     MATCH (st:ScopeStamp {tenant: $tenants[i], namespace: $stamp})
     RETURN i, st.epoch AS epoch, st.seq AS seq`,
    { tenants: [...tenants], stamp: ENTITY_STAMP },
  );
  const out: TenantStamp[] = tenants.map(() => null);
  for (const r of res.records)
    out[Number(r.get('i'))] = { epoch: String(r.get('epoch')), seq: Number(r.get('seq')) };
  return out;
}
