import type { ArmQuery } from '../../ports/graph.ts';

/**
 * What a read learnt about a scope, kept for a while: a bounded map whose entries expire after `ttlMs`.
 * Entries stay in age order (a set re-inserts last), so past `max` the oldest goes first. Used for hints
 * that only choose a strategy (a request's size, a scope's visible ANN share): a stale one costs time,
 * never a different answer.
 */
export class Recent<V> {
  private readonly entries = new Map<string, { at: number; value: V }>();

  constructor(
    private readonly ttlMs: number,
    private readonly max = 10_000,
  ) {}

  get(key: string): V | undefined {
    const hit = this.entries.get(key);
    return hit && Date.now() - hit.at < this.ttlMs ? hit.value : undefined;
  }

  /** The entry whatever its age, and whether it is still within the TTL. */
  peek(key: string): { value: V; fresh: boolean } | undefined {
    const hit = this.entries.get(key);
    return hit && { value: hit.value, fresh: Date.now() - hit.at < this.ttlMs };
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { at: Date.now(), value });
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}

/**
 * What share of an index's hits a caller scope could see the last time it searched (the fulltext or the
 * vector index), remembered a minute to size that scope's next search. Keyed by what decides the share:
 * tenant, request namespace, grants, classes, and what else names the search (the vector arm's model).
 */
export class VisibleShares {
  static readonly TTL_MS = 60_000;
  private readonly shares = new Recent<number>(VisibleShares.TTL_MS);

  private static key(q: ArmQuery, extra: readonly string[]): string {
    return JSON.stringify([q.scope.tenant, q.namespace, ...extra, q.scope.grants, q.classes]);
  }

  get(q: ArmQuery, ...extra: string[]): number | undefined {
    return this.shares.get(VisibleShares.key(q, extra));
  }

  set(q: ArmQuery, share: number, ...extra: string[]): void {
    this.shares.set(VisibleShares.key(q, extra), share);
  }
}
