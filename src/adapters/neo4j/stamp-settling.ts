import { stampValue } from './ranked-memo.ts';

/** A stamp as read: its key (tenant and namespace, or a tenant's entity or link stamp), epoch and number. */
export interface ReadStamp {
  readonly key: string;
  readonly epoch: string;
  readonly seq: number;
}

/*
 * When a stamp read may be trusted to number only transactions Neo4j has applied whole.
 *
 * Why: Neo4j applies a committed transaction to its store and its indexes while other transactions read
 * (read committed, no snapshot), so a reader can see a namespace's new stamp before every record that the
 * same transaction wrote under it. A process that then held "everything up to N" would miss those records
 * until the stamp moved past them and they were written again — for good in a quiet namespace (the leak
 * corpus lost one record from recall that way in CI; test/contract/stamp-race.test.ts lost 5–12 of 480
 * records under 8 projecting writers before this).
 *
 * The projection bumps a stamp under that node's write lock, and Neo4j releases a transaction's locks
 * only once it is applied; so a stamp read as N says every transaction up to N − 1 is applied whole, and
 * N itself is trusted once this process has seen it unchanged for SETTLE_MS (an apply takes
 * milliseconds). Data read at an unsettled N is complete through N − 1: used, held as such, and read
 * again (only what N stamped) until N settles or a later number shows.
 */
export class StampSettling {
  /** How long a stamp must have been seen unchanged before it is trusted whole. */
  static readonly SETTLE_MS = 1_000;
  /** Most keys remembered: the oldest first sights are forgotten (they only settle again, later). */
  static readonly MAX_KEYS = 100_000;
  /** Per key, the value seen last and when this process first saw it. */
  private readonly first = new Map<string, { value: string; at: number }>();

  constructor(
    /** The clock first sights and settling are measured by. */
    readonly now: () => number = () => Date.now(),
    readonly settleMs = StampSettling.SETTLE_MS,
  ) {}

  /** Notes stamps just read: a value's first sight starts its settling. */
  seen(stamps: Iterable<ReadStamp>): void {
    for (const s of stamps) {
      const value = stampValue(s);
      if (this.first.get(s.key)?.value === value) continue;
      this.first.delete(s.key);
      this.first.set(s.key, { value, at: this.now() });
      if (this.first.size > StampSettling.MAX_KEYS) this.first.delete(this.first.keys().next().value!);
    }
  }

  /** Whether `s` numbers only transactions applied whole by `at` (default now): seen unchanged SETTLE_MS before. */
  settled(s: ReadStamp, at: number = this.now()): boolean {
    const e = this.first.get(s.key);
    return e !== undefined && e.value === stampValue(s) && at - e.at >= this.settleMs;
  }

  /** The number data read now at stamp `s` is complete through: `s.seq` once settled, else the one before. */
  completeThrough(s: ReadStamp): number {
    return this.settled(s) ? s.seq : s.seq - 1;
  }
}
