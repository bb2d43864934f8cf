import type { ArmQuery } from '../../ports/graph.ts';
import type { Executor } from './executor.ts';
import { ARM_WHERE, armParams } from './scope.ts';
import { windows } from './vector-shards.ts';

/** A namespace's stamp as the projection last set it (scope-vectors.ts). */
export type Stamp = {
  readonly key: string;
  readonly ns: string;
  readonly epoch: string;
  readonly seq: number;
};

/** One stamp's value: equal while no record of its namespace was written, nor the graph wiped. */
export const stampValue = (s: Pick<Stamp, 'epoch' | 'seq'>): string => `${s.epoch}\u0000${s.seq}`;

/** The stamps' identity: equal when no record of those namespaces was written, nor the graph wiped, in between. */
export const stampsKey = (stamps: readonly Stamp[]): string =>
  stamps
    .map((s) => `${s.key}\u0000${stampValue(s)}`)
    .sort()
    .join('\u0001');

/**
 * Entries of some size (`sizeOf`: rows, entities), at most `maxHeld` in all: the least recently used go
 * first, and an entry larger than the whole budget is not held. With `idleMs`, an entry unused that long
 * is dropped too (checked every fifth of it, on a timer that never keeps the process alive). Shared by the
 * scope arm's and the graph arm's orders and the entity index (entity-held.ts).
 */
export class HeldRows<V> {
  /** Each entry with its size when it was set (an entry may grow in place until it is set again). */
  private readonly byKey = new Map<string, { value: V; size: number; usedAt: number }>();
  private held = 0;
  private sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(
    readonly maxHeld: number,
    private readonly sizeOf: (value: V) => number,
    private readonly idleMs?: number,
  ) {}

  /** The entry under `key`, now the most recently used. */
  get(key: string): V | undefined {
    const e = this.byKey.get(key);
    if (e === undefined) return undefined;
    this.byKey.delete(key);
    this.byKey.set(key, { ...e, usedAt: Date.now() });
    return e.value;
  }

  set(key: string, value: V): void {
    this.drop(key);
    const size = this.sizeOf(value);
    if (size > this.maxHeld) return;
    this.byKey.set(key, { value, size, usedAt: Date.now() });
    this.held += size;
    for (const k of this.byKey.keys()) {
      if (this.held <= this.maxHeld) break;
      this.drop(k);
    }
    if (this.idleMs && !this.sweeper) {
      this.sweeper = setInterval(() => this.dropIdle(this.idleMs!), this.idleMs / 5);
      this.sweeper.unref?.();
    }
  }

  private drop(key: string): void {
    this.held -= this.byKey.get(key)?.size ?? 0;
    this.byKey.delete(key);
  }

  /** Drop the entries unused for `idleMs` (the oldest come first, so stop at the first one in use). */
  private dropIdle(idleMs: number): void {
    const before = Date.now() - idleMs;
    for (const [key, e] of this.byKey) {
      if (e.usedAt > before) return;
      this.drop(key);
    }
  }
}

/** An entry's size as a list of rows (HeldRows' sizeOf for the arms' orders). */
export const rowCount = <V extends { readonly rows: readonly unknown[] }>(v: V): number => v.rows.length;

/*
 * Rankings of a request's records held in process, for an arm whose order depends only on each record's
 * own properties (the scope arm's confidence; the graph arm's per-anchor orders are anchor-orders.ts):
 * whoever may see them, so one ranking serves every caller of those namespaces, and no id reaches a caller
 * but through `firstVisible`, which runs the one entitlement filter (ARM_WHERE) on a window of the ranking
 * at a time.
 *
 * Why: the scope arm read and sorted each ancestor's norms for every recall (~2 ms of Neo4j in a service
 * namespace at 100k, bench:recall's statement replay); checking one window of 2k ids costs ~0.4 ms.
 *
 * Freshness: a ranking is held with the stamps of the namespaces it covers (read once per recall and
 * shared by its arms). Every projection transaction that writes a record bumps its namespace's stamp, so
 * a ranking is used only while nothing it covers changed; the caller's key names the rest. A ranking
 * read while one of its stamps had not settled (stamp-settling.ts: its transaction may not be applied
 * whole yet) is used but not held. Status, validity, class and entitlement are never held: the filter
 * reads them at each recall.
 *
 * Bounded: at most `maxHeld` ids across rankings, the least recently used dropped first.
 */
export class RankedMemo<T> {
  static readonly DEFAULT_HELD = 200_000;
  private readonly held: HeldRows<{ stamps: string; rows: readonly T[] }>;
  private readonly loads = new Map<string, Promise<readonly T[]>>();

  constructor(maxHeld = RankedMemo.DEFAULT_HELD) {
    this.held = new HeldRows(maxHeld, rowCount);
  }

  /**
   * The ranking under `key` as of `stamps`: held, or loaded once however many callers ask together, and
   * held when `settled` (asked as the load starts) says its stamps number only whole transactions.
   */
  async get(
    key: string,
    stamps: readonly Stamp[],
    load: () => Promise<readonly T[]>,
    settled: () => boolean,
  ): Promise<readonly T[]> {
    const version = stampsKey(stamps);
    const held = this.held.get(key);
    if (held && held.stamps === version) return held.rows;
    const loadKey = `${key}\u0002${version}`;
    const pending = this.loads.get(loadKey);
    if (pending) return pending;
    const whole = settled();
    const loading = load()
      .then((rows) => {
        if (whole) this.held.set(key, { stamps: version, rows });
        return rows;
      })
      .finally(() => this.loads.delete(loadKey));
    this.loads.set(loadKey, loading);
    return loading;
  }
}

/**
 * The first `k` ids of a ranking (best first) the request may see, through the arm filter: a window of
 * twice k at a time (most of a scope's records are visible to a caller who may recall in it), eightfold
 * larger while too few in it pass. `top(n)` gives the ranking's first n ids.
 */
export async function firstVisible(
  db: Executor,
  op: string,
  q: ArmQuery,
  size: number,
  top: (n: number) => readonly string[],
): Promise<string[]> {
  const visible: string[] = [];
  for (const { from, to } of windows(Math.max(2 * q.k, 32))) {
    if (from >= size) break;
    const ids = top(to).slice(from);
    if (ids.length === 0) break;
    const res = await db.read(
      op,
      `UNWIND range(0, size($ids) - 1) AS i
       MATCH (n:Record {tenant: $tenant, id: $ids[i]}) WHERE ${ARM_WHERE}
       RETURN n.id AS id ORDER BY i LIMIT toInteger($k)`,
      { ...armParams(q), ids, k: q.k - visible.length },
    );
    visible.push(...res.records.map((r) => String(r.get('id'))));
    if (visible.length >= q.k) break;
  }
  return visible;
}
