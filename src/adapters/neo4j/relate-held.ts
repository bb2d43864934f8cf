import type { Record as Neo4jRecord } from 'neo4j-driver';
import type { Executor } from './executor.ts';
import { GROUPS_BY_SUBJECT, GROUPS_HELD_WINDOW } from './relate-cypher.ts';
import { windows, type Ranking } from './vector-shards.ts';

/** A draft's subject query (`i`: its index in the request). */
export type SubjectQuery = { i: number; subjectKey: string };
/** A draft's vector query: only records embedded by the same model are compared with it. */
export type VectorQuery = { i: number; vector: number[]; modelId: string };

/** One request's relate lookup over vectors held in process. */
export interface HeldLookup {
  /** Its scope's parameters (scopeParams) with its namespace (`ns`) and the namespace's `chain`. */
  readonly scope: Readonly<Record<string, unknown>>;
  readonly bySubject: readonly SubjectQuery[];
  readonly withVector: readonly VectorQuery[];
  /** Each vector query's ranking of the request's held records, by query index. */
  readonly ranked: ReadonlyMap<number, Ranking>;
}

/**
 * Relate over the vectors held in process, for several requests' lookups at once (those of one
 * event-loop turn with the same k, relateTogether): each query's ranking is checked by Neo4j a window at
 * a time (relatable, visible under its own request's scope, of the query's model) until k are found or
 * the ranking ends. Returns each lookup's rows, in the order of `lookups`.
 *
 * One statement per window for all of them, each request's scope a row of `$groups`: under 64 writers
 * a turn held ~5 requests of different tenants, and each sent its own statement (~0.8 relate statements
 * a write), where a statement costs Neo4j and this process a fixed ~0.2–0.4 ms of CPU each whatever it
 * reads (six lookups as one statement against six: Neo4j 1.9–2.3 against 3.3–4.2 ms of CPU, the client
 * 0.6 against 1.4–2.4). Each query is answered in its own subquery under its own group's scope, so its
 * rows are those it would get alone. The first window's statement also answers the subject queries; a
 * subject match's row has no score, so it never counts toward a ranking's k.
 *
 * The cosine is the one the ranking computed (32-bit, within ~1e-6 of Neo4j's): Neo4j receives the
 * window's ids and their scores, never the query vector, and reads no embedding. Why: scoring the window
 * in Cypher made Neo4j decode each record's stored 384-number array (a JFR profile of the write bench).
 * The first window is 2k ids: Neo4j's work grows with the ids (an index seek and the filter's properties
 * each), and most nearest records are relatable and visible; where they are not, the next window is
 * eight times larger. Together: the statement's mean execution by Neo4j's clock 2.6–3.0 → 1.5–1.75 ms
 * (bench:ledger, hashing, three alternated pairs; the scores alone, at 32 ids: 2.1–2.2).
 */
export async function heldTogether(
  db: Executor,
  lookups: readonly HeldLookup[],
  k: number,
): Promise<Neo4jRecord[][]> {
  const rows = lookups.map((): Neo4jRecord[] => []);
  const found = lookups.map(() => new Map<number, number>());
  let first = true;
  for (const { from, to } of windows(2 * k)) {
    const groups = lookups
      .map((l, g) => ({
        ...l.scope,
        g,
        qs: first ? l.bySubject : [],
        held: l.withVector
          .filter((q) => (found[g]!.get(q.i) ?? 0) < k && l.ranked.get(q.i)!.size > from)
          .map((q) => window(l.ranked.get(q.i)!, q, { from, to }, k - (found[g]!.get(q.i) ?? 0))),
      }))
      .filter((s) => s.qs.length > 0 || s.held.length > 0);
    if (groups.length === 0) break;
    const held = groups.some((s) => s.held.length > 0);
    const parts = [...(first ? [GROUPS_BY_SUBJECT] : []), ...(held ? [GROUPS_HELD_WINDOW] : [])];
    const res = await db.read(
      first ? 'relate.bySubjectAndHeldTogether' : 'relate.byVectorHeldTogether',
      parts.join('\n     UNION ALL\n     '),
      { k, groups },
    );
    first = false;
    for (const r of res.records) {
      const g = Number(r.get('g'));
      rows[g]!.push(r);
      if (r.get('score') === null) continue; // a subject match
      const i = Number(r.get('i'));
      found[g]!.set(i, (found[g]!.get(i) ?? 0) + 1);
    }
  }
  return rows;
}

/** A query's window [from, to) of its ranking, with Neo4j's scale of each cosine: (1 + cos) / 2. */
function window(ranking: Ranking, q: VectorQuery, { from, to }: { from: number; to: number }, k: number) {
  const ranked = ranking.topScored(to).slice(from);
  return {
    i: q.i,
    modelId: q.modelId,
    ids: ranked.map((w) => w.id),
    scores: ranked.map((w) => (1 + w.cosine) / 2),
    k,
  };
}
