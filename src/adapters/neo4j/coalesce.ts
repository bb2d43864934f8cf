/**
 * Point reads that callers ask for at about the same time go to Neo4j as one statement.
 *
 * Why: under load every request of the write path reads its caller's grants, its idempotency receipt, its
 * scope's vector stamps and its relate candidates (recalls read grants and stamps too), each a statement
 * of its own, and a statement costs ~0.3 ms of CPU in this process and ~0.4 ms in Neo4j
 * however little it reads (measured on loopback here, 8 concurrent `MATCH … RETURN` on a missing key).
 * Keys asked for in the same turn of the event loop are read together after it (`setImmediate`): one
 * UNWIND over the distinct keys, each caller answered from its own rows.
 *
 * Freshness is unchanged: the statement runs after every caller in it asked, so each sees at least what
 * was committed when it asked. A failure fails every caller of that statement, as it would have failed
 * each of them alone (the executor has already retried what is transient).
 */
export class Coalesced<K, V> {
  private pending: Array<{ key: K; resolve: (v: V) => void; reject: (e: unknown) => void }> = [];

  constructor(
    /** One statement for the distinct keys: the answers in the same order. */
    private readonly readMany: (keys: readonly K[]) => Promise<readonly V[]>,
    /**
     * Identity of a key: equal keys in one turn are read once and share one answer (read-only). Without
     * it every call is read as its own key.
     */
    private readonly keyOf?: (key: K) => string,
    /** Most keys per statement; a fuller batch goes at once. */
    private readonly max = 256,
  ) {}

  read(key: K): Promise<V> {
    return new Promise<V>((resolve, reject) => {
      this.pending.push({ key, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => this.flush());
      else if (this.pending.length >= this.max) this.flush();
    });
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const index = new Map<string, number>();
    const keys: K[] = [];
    const slot = batch.map(({ key }) => {
      if (!this.keyOf) return keys.push(key) - 1;
      const id = this.keyOf(key);
      let i = index.get(id);
      if (i === undefined) {
        i = keys.push(key) - 1;
        index.set(id, i);
      }
      return i;
    });
    this.readMany(keys).then(
      (values) => batch.forEach((b, j) => b.resolve(values[slot[j]!]!)),
      (e: unknown) => batch.forEach((b) => b.reject(e)),
    );
  }
}
