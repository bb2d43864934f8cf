import { createHash } from 'node:crypto';
import type { SubjectHold, SubjectTurns } from '../../ports/ingest-lookups.ts';
import type { Executor, Hold } from './executor.ts';

/**
 * A subject's turn is the write lock on one SubjectTurn node, created by a MERGE under a uniqueness
 * constraint (migration 017) in a transaction that is never committed: a second MERGE of the same key in
 * another process waits until the first transaction ends, and the node itself is never stored. So nothing
 * persists (no subject outlives an erasure in a lock table), a killed holder's turns end with its
 * connection, and one UNWIND takes several keys in their sorted order (two writes naming the same two
 * subjects cannot each hold one and wait for the other).
 *
 * Turns asked for in the same turn of the event loop are taken together, in one transaction that ends
 * when the last of them is given back. One transaction per write cost 1.5–1.8 ms of Neo4j's CPU and about
 * 2 ms of this process's a write under load (bge bench: 137 writes/s against 185–191 without turns). A
 * group that waits longer than `patienceMs` (a subject of one of them is held elsewhere) lets each of its
 * turns be taken alone, so one contended subject delays the others of its group by that much at most.
 *
 * Keys are digests: the words of a subject never reach Neo4j's transaction list or query log from here.
 */
export const SUBJECT_TURN = `UNWIND $keys AS key
MERGE (t:SubjectTurn {key: key})
RETURN count(t) AS n`;

interface Ask {
  readonly keys: readonly string[];
  readonly waitMs: number;
  readonly holdMs: number;
  readonly at: number;
  resolve(h: SubjectHold | null): void;
  reject(e: unknown): void;
}

export class Neo4jSubjectTurns implements SubjectTurns {
  /** How long a group waits for its turns before each is taken alone. */
  static readonly PATIENCE_MS = 250;
  private asks: Ask[] = [];

  constructor(
    private readonly db: Pick<Executor, 'hold'>,
    private readonly patienceMs = Neo4jSubjectTurns.PATIENCE_MS,
  ) {}

  hold(keys: readonly string[], waitMs: number, holdMs: number): Promise<SubjectHold | null> {
    return new Promise((resolve, reject) => {
      const at = performance.now();
      this.asks.push({ keys: keys.map(digest), waitMs, holdMs, at, resolve, reject });
      if (this.asks.length === 1) setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    const group = this.asks;
    this.asks = [];
    if (group.length === 1) return this.alone(group[0]!);
    const waitMs = Math.min(this.patienceMs, ...group.map((a) => a.waitMs));
    const holdMs = Math.max(...group.map((a) => a.holdMs));
    let held: Hold | null;
    try {
      held = await this.take(
        group.flatMap((a) => a.keys),
        waitMs,
        holdMs,
      );
    } catch (e) {
      for (const a of group) a.reject(e);
      return;
    }
    if (!held) {
      for (const a of group) void this.alone(a);
      return;
    }
    let out = group.length;
    for (const a of group) a.resolve(once(() => --out === 0 && held.release()));
  }

  /** One ask in a transaction of its own, within what is left of its wait. */
  private async alone(a: Ask): Promise<void> {
    const left = a.waitMs - (performance.now() - a.at);
    if (left <= 0) return a.resolve(null);
    await this.take(a.keys, left, a.holdMs).then(
      (h) => a.resolve(h),
      (e: unknown) => a.reject(e),
    );
  }

  private take(keys: readonly string[], waitMs: number, holdMs: number): Promise<Hold | null> {
    const digests = [...new Set(keys)].sort();
    return this.db.hold('subject.turn', SUBJECT_TURN, { keys: digests }, waitMs, holdMs);
  }
}

const once = (release: () => unknown): SubjectHold => {
  let done = false;
  return {
    release: () => {
      if (done) return;
      done = true;
      release();
    },
  };
};

const digest = (key: string): string => createHash('sha256').update(key).digest('base64url');
