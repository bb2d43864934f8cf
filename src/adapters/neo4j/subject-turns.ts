import { createHash } from 'node:crypto';
import type { SubjectHold, SubjectTurns } from '../../ports/graph.ts';
import type { Executor } from './executor.ts';

/**
 * A subject's turn is the write lock on one SubjectTurn node, created by a MERGE under a uniqueness
 * constraint (migration 017) in a transaction that is never committed: a second MERGE of the same key in
 * another process waits until the first transaction ends, and the node itself is never stored. So nothing
 * persists (no subject outlives an erasure in a lock table), a killed holder's turns end with its
 * connection, and one UNWIND takes several keys in their sorted order (two writes naming the same two
 * subjects cannot each hold one and wait for the other).
 *
 * Keys are digests: the words of a subject never reach Neo4j's transaction list or query log from here.
 */
export const SUBJECT_TURN = `UNWIND $keys AS key
MERGE (t:SubjectTurn {key: key})
RETURN count(t) AS n`;

export class Neo4jSubjectTurns implements SubjectTurns {
  constructor(private readonly db: Pick<Executor, 'hold'>) {}

  hold(keys: readonly string[], waitMs: number, holdMs: number): Promise<SubjectHold | null> {
    const digests = [...new Set(keys.map(digest))].sort();
    return this.db.hold('subject.turn', SUBJECT_TURN, { keys: digests }, waitMs, holdMs);
  }
}

const digest = (key: string): string => createHash('sha256').update(key).digest('base64url');
