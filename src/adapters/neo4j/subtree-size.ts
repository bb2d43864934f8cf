import { namespaceChain } from '../../domain/model.ts';
import type { Executor } from './executor.ts';
import { Recent } from './recent.ts';
import { namespaceKey, SUBTREE } from './scope.ts';

/**
 * How many records a request covers (its namespace's ancestors and subtree in one tenant), counted up to
 * a cap and reused for a while: recall's arms and ingest's relate lookup choose an exact scan or an index
 * by it. Both return the records they ask for either way, so a stale count costs time, never
 * correctness — and a warm request saves the round trip. Bounded by tenant and namespace, not by grants:
 * it never returns a record.
 */
export class SubtreeSizes {
  /** Counted up to here: past it, every caller takes its indexed path (the largest bound any caller compares with, plus one). */
  static readonly CAP = 30_001;
  /** How long a namespace's count is reused before it is counted again (in the background). */
  static readonly TTL_MS = 30_000;
  private readonly sizes = new Recent<Promise<number>>(SubtreeSizes.TTL_MS);
  private readonly recounting = new Set<string>();

  constructor(private readonly db: Executor) {}

  /**
   * The count; an older one than TTL_MS is still answered at once while a recount runs in the background
   * (once per namespace at a time), so no recall waits on a recount once its namespace has a count.
   */
  of(tenant: string, namespace: string): Promise<number> {
    const key = namespaceKey(tenant, namespace);
    const hit = this.sizes.peek(key);
    if (hit && !hit.fresh && !this.recounting.has(key)) {
      this.recounting.add(key);
      void this.count(tenant, namespace)
        .then((n) => this.sizes.set(key, Promise.resolve(n)))
        .catch(() => undefined)
        .finally(() => this.recounting.delete(key));
    }
    if (hit) return hit.value;
    const count = this.count(tenant, namespace);
    count.catch(() => this.sizes.delete(key));
    this.sizes.set(key, count);
    return count;
  }

  private count(tenant: string, namespace: string): Promise<number> {
    return this.db
      .read('recall.size', `${SUBTREE} WITH n LIMIT toInteger($cap) RETURN count(n) AS c`, {
        tenant,
        ns: namespace,
        chain: namespaceChain(namespace),
        cap: SubtreeSizes.CAP,
      })
      .then((r) => Number(r.records[0]?.get('c') ?? 0));
  }
}
