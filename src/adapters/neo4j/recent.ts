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
