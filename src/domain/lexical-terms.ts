import { stemmer } from 'stemmer';

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

/**
 * What the lexical ranking compares: each word's Porter stem, so "painted", "paints" and "painting" are
 * one term ("paint") in the query and in the record alike. Stemming is the standard English IR
 * normalisation; it is applied to both sides, so a record and a query that share a word always match.
 */
export function stems(text: string): string[] {
  return terms(text).map(stem);
}

const stemmed = new Map<string, string>();
/** A word's Porter stem (memoised: a recall stems the same few thousand words again and again). */
export function stem(word: string): string {
  let s = stemmed.get(word);
  if (s === undefined) {
    s = /^[a-z]+$/.test(word) ? stemmer(word) : word;
    if (stemmed.size >= 100_000) stemmed.clear();
    stemmed.set(word, s);
  }
  return s;
}

/**
 * What the index search looks for, per query word: the part the word shares with its stem ("happy" →
 * "happ", since its stem is "happi"), so a substring or prefix search finds every record whose words stem
 * alike ("happiness", "happily"); never shorter than 3 letters (the whole word then).
 */
export function searchKeys(text: string): string[] {
  const out = new Set<string>();
  for (const w of terms(text)) {
    const s = stem(w);
    let i = 0;
    while (i < w.length && i < s.length && w[i] === s[i]) i++;
    out.add(i >= 3 ? w.slice(0, i) : w);
  }
  return [...out];
}
