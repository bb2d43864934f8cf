import type { Record as Neo4jRecord } from 'neo4j-driver';
import { namespaceChain } from '../../domain/model.ts';
import type { ArmQuery } from '../../ports/graph.ts';
import type { Executor } from './executor.ts';
import { namespaceKey, SAME_AS_STAMP } from './scope.ts';
import { Coalesced } from './coalesce.ts';
import { firstVisible, type Stamp } from './ranked-memo.ts';
import { StampSettling } from './stamp-settling.ts';
import { Ranking, Shard, type VectorRow } from './vector-shards.ts';

/** The stamps of each request's namespaces (its ancestors' and its subtree's), one statement for all. */
async function stampsOf(db: Executor, qs: ReadonlyArray<{ tenant: string; ns: string }>): Promise<Stamp[][]> {
  const res = await db.read(
    'recall.vectorStamps',
    `UNWIND $qs AS q
     MATCH (st:ScopeStamp)
     WHERE st.tenant = q.tenant AND (st.namespace IN q.chain OR st.namespace STARTS WITH q.ns + '/')
     RETURN q.i AS i, st.namespace AS ns, st.epoch AS epoch, st.seq AS seq`,
    // The tenant's SAME_AS stamp too (scope.ts): the graph arm's held orders depend on entity links.
    {
      qs: qs.map((q, i) => ({
        i,
        tenant: q.tenant,
        ns: q.ns,
        chain: [...namespaceChain(q.ns), SAME_AS_STAMP],
      })),
    },
  );
  const out: Stamp[][] = qs.map(() => []);
  for (const r of res.records) {
    const i = Number(r.get('i'));
    const ns = String(r.get('ns'));
    out[i]!.push({
      key: namespaceKey(qs[i]!.tenant, ns),
      ns,
      epoch: String(r.get('epoch')),
      seq: Number(r.get('seq')),
    });
  }
  return out;
}

/**
 * The statements that bring a shard up to date (load, vectorsOf). Both name the index they seek
 * (`USING INDEX SEEK`): planned over a new, empty graph, Neo4j chose to scan the index and kept that plan
 * as the graph grew (README, "Plans made over an empty graph"); seek-plans.test.ts checks them.
 */
export const VECTOR_LOAD = `UNWIND $loads AS l
       MATCH (n:Record) USING INDEX SEEK n:Record(tenant, namespace, stamp)
       WHERE n.tenant = l.tenant AND n.namespace = l.ns AND n.stamp > l.since
       RETURN l.tenant AS tenant, l.ns AS ns, n.id AS id, n.embeddingModel AS model, n.version AS version,
         CASE WHEN l.since < 0 THEN n.embedding END AS vector`;

export const VECTOR_FETCH = `UNWIND $ids AS x
       OPTIONAL MATCH (n:Record {tenant: x.tenant, id: x.id}) USING INDEX SEEK n:Record(tenant, id)
       WHERE n.namespace = x.ns
       RETURN x.tenant AS tenant, x.ns AS ns, x.id AS id, n.embeddingModel AS model, n.version AS version,
         n.embedding AS vector`;

/** A namespace's shard to bring up to its stamp. */
type StaleShard = Stamp & { readonly tenant: string };

/*
 * The vector arm over a request scope of up to MAX_SCOPE records, from vectors held in process.
 *
 * Why: Neo4j 5.26's vector index cannot filter. Its nearest neighbours span every tenant and namespace, so
 * a scope holding a few percent of them needs fetches of thousands (~65 ms at 1,000, ~120 at 5,000), and
 * an exact scan in Cypher reads each record's embedding at 30–60 µs a record. Here the scope's vectors
 * are scored in memory (~0.03 µs a 384-d vector on this machine, dense-rows.ts) and only the best ids go
 * back to Neo4j, which keeps the one entitlement filter (ARM_WHERE) and the one source of truth.
 *
 * Freshness: the projection stamps each namespace it writes (a ScopeStamp node per tenant and namespace:
 * a random epoch when created, a sequence number bumped in every projection transaction that writes its
 * records, under that node's write lock) and each record it writes with its namespace's new number. A
 * recall reads the stamps of its scope's namespaces first (one indexed read), then loads what changed
 * since the shard it holds: records stamped later, or the whole namespace when the epoch differs (a wiped
 * and rebuilt graph). So a recall sees every record committed before it started, as a Cypher scan would.
 * A shard read at stamp N holds every record through N − 1, and through N only once N has settled
 * (stamp-settling.ts: Neo4j may show a stamp before the records its transaction wrote), so a namespace
 * is read again, for what N stamped, until then.
 * Erasure writes the record without its embedding, and the next recall in its namespace drops the vector.
 *
 * Bounded by MUNINN_RECALL_VECTORS_HELD: the least recently used shards go first.
 */
export class ScopeVectors {
  /** Scopes up to this many records are ranked here: 30k vectors score in ~1–6 ms, under one ANN call at fetch 200. */
  static readonly MAX_SCOPE = 30_000;
  /** MUNINN_RECALL_VECTORS_HELD's default: eight scopes of the largest size. */
  static readonly DEFAULT_HELD = 8 * ScopeVectors.MAX_SCOPE;
  /**
   * A shard unused this long is dropped (checked every fifth of it, on a timer that never keeps the
   * process alive): an erased record's vector leaves a process at its namespace's next recall, or with
   * its idle shard.
   */
  static readonly IDLE_MS = 5 * 60_000;
  /** Held shards, least recently used first, with when each was last used. */
  private readonly byKey = new Map<string, Shard>();
  private readonly usedAt = new Map<string, number>();
  private sweeper: ReturnType<typeof setInterval> | undefined;
  private held = 0;
  private loading: Promise<unknown> = Promise.resolve();
  /** Every write's relate and every recall read their scope's stamps: those asked together, together. */
  private readonly stamps: Coalesced<{ tenant: string; ns: string }, Stamp[]>;

  constructor(
    private readonly db: Executor,
    /** Most vectors held at once across shards; 0 turns the arm off. */
    readonly maxHeld: number,
    /** When a stamp read is trusted whole; shared with the arms' held orders (recall-arms.ts). */
    readonly settling = new StampSettling(),
  ) {
    this.stamps = new Coalesced(
      (qs) =>
        stampsOf(db, qs).then((read) => {
          for (const stamps of read) settling.seen(stamps);
          return read;
        }),
      (q) => `${q.tenant}\u0000${q.ns}`,
    );
  }

  /** Whether a scope of `size` records is ranked here. */
  covers(size: number): boolean {
    return this.maxHeld > 0 && size <= Math.min(ScopeVectors.MAX_SCOPE, this.maxHeld);
  }

  /** The request's visible records of `modelId`, nearest first, at most k (entitlement checked by Neo4j). */
  async nearest(q: ArmQuery, vector: readonly number[], modelId: string): Promise<string[]> {
    const ranking = new Ranking(
      await this.shards(q.scope.tenant, q.namespace, await this.stampsFor(q)),
      modelId,
      vector,
    );
    return firstVisible(this.db, 'recall.vectorVisible', q, ranking.size, (n) => ranking.top(n));
  }

  /** The stamps of a request's namespaces (its ancestors' and its subtree's), read together with others'. */
  private stampsOf(tenant: string, namespace: string): Promise<Stamp[]> {
    return this.stamps.read({ tenant, ns: namespace });
  }

  /**
   * The stamps of one recall's namespaces, read once for all its arms (ArmQuery is one object per recall):
   * the first arm to ask reads them after the recall started, so each arm still sees every record
   * committed before it.
   */
  stampsFor(q: ArmQuery): Promise<Stamp[]> {
    let read = this.perQuery.get(q);
    if (!read) {
      read = this.stampsOf(q.scope.tenant, q.namespace);
      this.perQuery.set(q, read);
    }
    return read;
  }
  private readonly perQuery = new WeakMap<ArmQuery, Promise<Stamp[]>>();

  /**
   * The shards of a request over `namespace` (its ancestors' and its subtree's), each brought up to its
   * namespace's stamp: every record vector of the request, whoever may see it — rank them, then filter.
   */
  async shards(tenant: string, namespace: string, read?: readonly Stamp[]): Promise<Shard[]> {
    const stamps = (read ?? (await this.stampsOf(tenant, namespace))).filter((s) => s.ns !== SAME_AS_STAMP);
    const stale = () => stamps.filter((s) => !this.current(s.key, s.epoch, s.seq));
    if (stale().length > 0) await this.loadSoon(() => stale().map((s) => ({ ...s, tenant })));
    const shards = stamps.map((s) => this.byKey.get(s.key)).filter((s): s is Shard => s !== undefined);
    for (const s of stamps) this.touch(s.key);
    this.evict(new Set(stamps.map((s) => s.key)));
    return shards;
  }

  private current(key: string, epoch: string, seq: number): boolean {
    const s = this.byKey.get(key);
    return s !== undefined && s.epoch === epoch && s.seq >= seq;
  }

  /**
   * Loads what a caller found stale, one load at a time: a shard is read once however many callers find
   * it stale together. Callers that ask while a load runs share the next one, whatever their tenants (one
   * statement for all: under 64 writers each write's relate found its namespace stale, 0.24 loads per
   * write, one per tenant). What is stale is decided when the load starts: an earlier load may have
   * brought a shard up to date meanwhile.
   */
  private loadSoon(stale: () => readonly StaleShard[]): Promise<void> {
    this.asked.push(stale);
    if (!this.next) {
      const next = this.loading.then(() => {
        const asked = this.asked.splice(0);
        this.next = null;
        // One load per namespace: of two callers' stamps for it, the later one (same epoch: the higher seq).
        const byKey = new Map<string, StaleShard>();
        for (const s of asked.flatMap((f) => f())) {
          const other = byKey.get(s.key);
          if (!other || other.epoch !== s.epoch || other.seq < s.seq) byKey.set(s.key, s);
        }
        return this.load([...byKey.values()]);
      });
      this.next = next;
      this.loading = next.catch(() => undefined);
    }
    return this.next;
  }
  private asked: Array<() => readonly StaleShard[]> = [];
  private next: Promise<void> | null = null;

  /**
   * Brings each stale shard up to its stamp. A namespace not held is read whole, vectors included. One
   * held is asked what changed since its number: ids, models and versions only, and then the vectors of
   * the records it does not hold at that version and model (new ones, new text, another model) in a
   * second statement. Why: most records written again keep their vector (a reinforcement), and reading
   * a 384-number array made this the costliest statement per write in Neo4j after relate (bench:ledger,
   * 2.9 ms each by Neo4j's clock) and its rows a good part of the driver's decoding here.
   */
  private async load(stale: readonly StaleShard[]): Promise<void> {
    if (stale.length === 0) return;
    const held = (s: StaleShard) => {
      const shard = this.byKey.get(s.key);
      return shard && shard.epoch === s.epoch ? shard : undefined;
    };
    const loads = stale.map((s) => ({ tenant: s.tenant, ns: s.ns, since: held(s)?.seq ?? -1 }));
    // How far what this load reads is whole, decided before it reads (stamp-settling.ts).
    const through = new Map(stale.map((s) => [s.key, this.settling.completeThrough(s)]));
    const res = await this.db.read('recall.vectorLoad', VECTOR_LOAD, { loads });
    const rows = new Map<string, VectorRow[]>();
    const add = (key: string, row: VectorRow) => pushTo(rows, key, row);
    const fetch: Array<{ tenant: string; ns: string; id: string }> = [];
    const heldBy = new Map(stale.map((s) => [s.key, held(s)]));
    for (const r of res.records) {
      const [tenant, ns, row] = [String(r.get('tenant')), String(r.get('ns')), vectorRow(r)];
      const key = namespaceKey(tenant, ns);
      if (row.model === null || row.vector !== null) add(key, row);
      else if (!heldBy.get(key)?.holds(row.id, row.model, row.version!))
        fetch.push({ tenant, ns, id: row.id });
    }
    for (const [key, list] of await this.vectorsOf(fetch)) list.forEach((row) => add(key, row));
    for (const s of stale) {
      const before = this.byKey.get(s.key);
      const shard = heldBy.get(s.key) ?? new Shard(s.epoch, -1);
      this.held -= before?.size ?? 0;
      shard.apply(rows.get(s.key) ?? []);
      // The stamp read before the load (less one until it settles): what is stamped later is loaded again
      // next time (idempotent).
      shard.seq = Math.max(shard.seq, through.get(s.key)!);
      this.byKey.set(s.key, shard);
      this.held += shard.size;
    }
  }

  /**
   * The vectors of records a load found changed, by namespace key. A record no longer in that namespace
   * (moved or gone since) answers with no vector, so the shard lets it go.
   */
  private async vectorsOf(
    ids: ReadonlyArray<{ tenant: string; ns: string; id: string }>,
  ): Promise<Map<string, VectorRow[]>> {
    const out = new Map<string, VectorRow[]>();
    if (ids.length === 0) return out;
    const res = await this.db.read('recall.vectorFetch', VECTOR_FETCH, { ids });
    for (const r of res.records)
      pushTo(out, namespaceKey(String(r.get('tenant')), String(r.get('ns'))), vectorRow(r));
    return out;
  }

  private touch(key: string): void {
    const s = this.byKey.get(key);
    if (!s) return;
    this.byKey.delete(key);
    this.byKey.set(key, s);
    this.usedAt.set(key, Date.now());
    if (this.sweeper) return;
    this.sweeper = setInterval(() => this.dropIdle(), ScopeVectors.IDLE_MS / 5);
    this.sweeper.unref?.();
  }

  private drop(key: string): void {
    this.held -= this.byKey.get(key)?.size ?? 0;
    this.byKey.delete(key);
    this.usedAt.delete(key);
  }

  /** Drop the least recently used shards, never one of `keep`, until at most maxHeld vectors remain. */
  private evict(keep: ReadonlySet<string>): void {
    for (const key of this.byKey.keys()) {
      if (this.held <= this.maxHeld) return;
      if (!keep.has(key)) this.drop(key);
    }
  }

  /** Drop the shards unused for IDLE_MS (the oldest come first, so stop at the first one in use). */
  private dropIdle(): void {
    const before = Date.now() - ScopeVectors.IDLE_MS;
    for (const key of this.byKey.keys()) {
      if ((this.usedAt.get(key) ?? 0) > before) return;
      this.drop(key);
    }
  }
}

/** A load's or a fetch's row: a record's model, version and (where read) vector. */
function vectorRow(r: Neo4jRecord): VectorRow {
  const version = r.get('version') as number | null;
  return {
    id: String(r.get('id')),
    model: r.get('model') as string | null,
    vector: r.get('vector') as number[] | null,
    ...(version === null || version === undefined ? {} : { version: Number(version) }),
  };
}

/** Adds `row` to `key`'s list (a push: a whole-namespace load gathers up to 30,000 rows). */
function pushTo(lists: Map<string, VectorRow[]>, key: string, row: VectorRow): void {
  const list = lists.get(key);
  if (list) list.push(row);
  else lists.set(key, [row]);
}
