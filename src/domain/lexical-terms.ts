/**
 * The word split shared by the lexical arm's fulltext query (the Neo4j adapter) and the candidate ranking
 * (src/recall/lexical.ts): one split for both, so what Lucene finds is what BM25 scores.
 */

/** A record the lexical arm found, with what is searched of it. */
export interface LexicalCandidate {
  readonly id: string;
  readonly subject: string;
  readonly text: string;
  /** The neighbouring turns of the turn it cites (domain/turn-context.ts), if any. */
  readonly context: string | null;
  readonly validFrom: string;
}

export const STOP = new Set(['and', 'or', 'not', 'to']);

/** The same word split as the fulltext query (lower case, letters, digits, _ and -). */
export function terms(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}_-]+/u)
    .filter((w) => w.length > 1 && !STOP.has(w));
}
