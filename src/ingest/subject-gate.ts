import { subjectKeyOf } from '../domain/subject-key.ts';
import type { SubjectHold, SubjectTurns } from '../ports/ingest-lookups.ts';
import type { ProjectionAwait } from '../ports/ledger.ts';
import { refused } from './overload.ts';

/**
 * One decision at a time per subject, each on a graph that holds the one before it.
 *
 * Relate decides on the projected graph (gather → decide): a repeat reinforces the record it repeats,
 * another object for the same subject contradicts or supersedes it. Two requests about one subject that
 * arrive together both read the graph before either is projected, and neither sees the other: four
 * agents telling Muninn "the billing API uses Redis" in the same second made four ACTIVE records, and
 * "uses Redis" beside "uses Memcached" would have made two uncontested ones.
 *
 * So a write about a subject waits for the previous write about it (in this process) to be decided and,
 * when that one appended something, for the projection to apply it; then it looks up what it decides on
 * (its embedding was computed meanwhile: plan-drafts.ts, prepareDrafts). Writes about other
 * subjects never wait. A write that touched no relatable subject passes straight through. The decision is
 * still written into the event (a replay never re-decides), which is why this is done here and not by
 * the fold: the fold cannot compare statements whose words erasure may have shredded.
 *
 * Bounded like the rest of the write path's backpressure (overload.ts): a write that would wait longer
 * than `maxWaitMs` (MUNINN_WRITE_MAX_LAG_MS) is refused with RATE_LIMITED and a `retryAfterMs`, and the
 * ones behind it still wait for what it waited for.
 *
 * Across API processes (`turns`, MUNINN_SUBJECT_TURNS=graph): after its turn in this process a write also
 * takes the subject's turn in the graph (ports/graph.ts, SubjectTurns) and gives it back once its own
 * write is projected, so a write through another replica gathers only after that. The wait in this
 * process comes first: one waiter per subject per process, not one per write, holds a connection.
 */

interface Position {
  readonly partition: number;
  readonly offset: bigint;
}

/** A write's turn: settles with what the next one must see projected (nothing, once it is). */
interface Turn {
  readonly decided: Promise<readonly Position[]>;
  settledAt: number | null;
}

/** What a write returns: its outcome, and where its last event went when it is not projected yet. */
export interface GateResult {
  readonly outcome: string;
  readonly position: string | null;
}

export class SubjectGate {
  private readonly last = new Map<string, Turn>();
  private sweepAt = 1024;

  /** `across`: the graph's turns, held at most `holdMs` each; without it only this process is ordered. */
  constructor(
    private readonly projection: Pick<ProjectionAwait, 'waitFor'>,
    private readonly maxWaitMs: number,
    private readonly across?: { readonly turns: SubjectTurns; readonly holdMs: number },
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Runs `work` (gather → decide → commit) once the writes before it about these subjects are projected. */
  async around<R extends GateResult>(
    tenant: string,
    subjects: readonly string[],
    work: () => Promise<R>,
  ): Promise<R> {
    const keys = [...new Set(subjects.map((s) => `${tenant}\u0000${subjectKeyOf(s)}`))].sort();
    if (keys.length === 0) return work();
    this.sweep();
    let settle!: (p: readonly Position[] | Promise<readonly Position[]>) => void;
    const turn: Turn = { decided: new Promise((res) => (settle = res)), settledAt: null };
    const before = new Set<Turn>();
    for (const key of keys) {
      const prev = this.last.get(key);
      if (prev) before.add(prev);
      this.last.set(key, turn);
    }
    const done = (p: readonly Position[] | Promise<readonly Position[]>) => {
      settle(p);
      void turn.decided.then(() => (turn.settledAt = this.now()));
    };
    const deadline = this.now() + this.maxWaitMs;
    let hold: SubjectHold | null = null;
    try {
      await this.waitBehind([...before], deadline);
      hold = await this.holdAcross(keys, deadline);
    } catch (e) {
      // Refused: those behind this write wait for what it waited for.
      done(Promise.all([...before].map((t) => t.decided)).then((ps) => furthest(ps.flat())));
      throw e;
    }
    try {
      const r = await work();
      const appended = r.outcome === 'PENDING' && r.position ? [parsePosition(r.position)] : [];
      done(appended);
      if (hold) this.releaseOnceProjected(hold, appended);
      return r;
    } catch (e) {
      done([]);
      hold?.release();
      throw e;
    }
  }

  /** The graph's turns of these keys (null when only this process is ordered). */
  private async holdAcross(keys: readonly string[], deadline: number): Promise<SubjectHold | null> {
    if (!this.across) return null;
    // A write that spent its wait here still gets a moment for a turn nobody holds.
    const left = Math.max(50, deadline - this.now());
    const hold = await this.across.turns.hold(keys, left, this.across.holdMs);
    if (!hold) throw this.refusal('projected', ' through another API process');
    return hold;
  }

  /** Gives the graph's turns back once this write is projected (at once when it appended nothing). */
  private releaseOnceProjected(hold: SubjectHold, appended: readonly Position[]): void {
    const p = appended[0];
    if (!p) return hold.release();
    void this.projection
      .waitFor(p.partition, String(p.offset), this.across!.holdMs, true)
      .catch(() => false)
      .finally(() => hold.release());
  }

  private async waitBehind(before: readonly Turn[], deadline: number): Promise<void> {
    if (before.length === 0) return;
    const positions = await within(Promise.all(before.map((t) => t.decided)), this.maxWaitMs, () =>
      this.refusal('decided'),
    );
    for (const p of furthest(positions.flat())) {
      const left = Math.max(0, deadline - this.now());
      if (!(await this.projection.waitFor(p.partition, String(p.offset), left)))
        throw this.refusal('projected');
    }
  }

  private refusal(what: 'decided' | 'projected', where = '') {
    return refused(
      `an earlier write about the same subject${where} was not ${what} within ${this.maxWaitMs} ms`,
      Math.min(5_000, Math.max(100, Math.round(this.maxWaitMs / 4))),
      { subjectWaitMs: this.maxWaitMs },
    );
  }

  /** Forgets turns settled longer ago than a write would wait for them (amortised: past a growing size). */
  private sweep(): void {
    if (this.last.size < this.sweepAt) return;
    const before = this.now() - this.maxWaitMs;
    for (const [key, t] of this.last) if (t.settledAt !== null && t.settledAt < before) this.last.delete(key);
    this.sweepAt = Math.max(1024, this.last.size * 2);
  }
}

/** The furthest position of each partition (a tenant's events share one: in practice, one position). */
function furthest(ps: readonly Position[]): Position[] {
  const max = new Map<number, bigint>();
  for (const p of ps) if ((max.get(p.partition) ?? -1n) < p.offset) max.set(p.partition, p.offset);
  return [...max].map(([partition, offset]) => ({ partition, offset }));
}

const parsePosition = (s: string): Position => {
  const [partition, offset] = s.split(':');
  return { partition: Number(partition), offset: BigInt(offset!) };
};

function within<T>(p: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
