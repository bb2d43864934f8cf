/**
 * Lexical ranking that depends only on what the caller may see. Lucene's BM25 takes its statistics
 * (document frequency, average length) from the whole index, other tenants and hidden namespaces
 * included: ranking by it would let invisible records move what a caller sees (and leak that they
 * exist). So the fulltext index only finds candidates, already filtered by entitlement; they are ranked
 * here with BM25 whose statistics come from the candidates themselves.
 */
import { STOP, stems, terms, type LexicalCandidate } from '../domain/lexical-terms.ts';

// The adapter's fulltext query splits words the same way: the split lives in the domain, shared by both.
export { terms, type LexicalCandidate };

/** A document BM25 ranks. */
export interface LexicalDocument {
  readonly id: string;
  readonly text: string;
}

const DAY = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'long',
  year: 'numeric',
  timeZone: 'UTC',
});

/**
 * What a user searches a record by: who (the subject — a turn's speaker), when (the day it is valid
 * from, in words: "8 May 2023") and what ("subject (day): text"). The context document adds the turn's
 * neighbours, for answers that only make sense with the turn before or after them.
 */
export function lexicalDocuments(c: LexicalCandidate): {
  own: LexicalDocument;
  withContext: LexicalDocument;
} {
  const t = Date.parse(c.validFrom);
  const own = `${c.subject}${Number.isFinite(t) ? ` (${DAY.format(t)})` : ''}: ${c.text}`;
  return {
    own: { id: c.id, text: own },
    withContext: { id: c.id, text: c.context ? `${own}\n${c.context}` : own },
  };
}

const analysed = new Map<string, readonly string[]>();
/**
 * A text's stems, memoised by the text (as `stem` memoises words): a namespace's records come back as
 * candidates recall after recall, and splitting and stemming 500 of them twice cost ~20 ms of the event
 * loop per recall, more than ranking them. Bounded: emptied when full, so it costs time, never answers.
 */
function stemsOf(text: string): readonly string[] {
  let s = analysed.get(text);
  if (s === undefined) {
    s = stems(text);
    if (analysed.size >= STEMMED_TEXTS_MAX) analysed.clear();
    analysed.set(text, s);
  }
  return s;
}
/** How many texts' stems are kept (~0.5 KB each: their stems are shared strings). */
const STEMMED_TEXTS_MAX = 20_000;

/**
 * BM25 (k1 1.2, b 0.75) over the candidate set, on word stems unless `analyze` says otherwise (the
 * issue #10 baseline keeps its plain words); ties by id. Candidates matching no term score 0 and drop.
 */
export function rankLexical(
  query: string,
  candidates: readonly LexicalDocument[],
  k: number,
  params: { k1?: number; b?: number; analyze?: (text: string) => readonly string[] } = {},
): string[] {
  const k1 = params.k1 ?? 1.2;
  const b = params.b ?? 0.75;
  const analyze = params.analyze ?? stemsOf;
  const q = [...new Set(analyze(query))];
  if (q.length === 0 || candidates.length === 0) return [];
  // Only the query's terms are counted: the rest of a document matters through its length alone.
  const slot = new Map(q.map((t, i) => [t, i]));
  const docs = candidates.map((c) => {
    const ts = analyze(c.text);
    const tf = new Array<number>(q.length).fill(0);
    for (const t of ts) {
      const i = slot.get(t);
      if (i !== undefined) tf[i]!++;
    }
    return { id: c.id, len: ts.length, tf };
  });
  const n = docs.length;
  const avg = docs.reduce((s, d) => s + d.len, 0) / n || 1;
  const idf = q.map((_, i) => {
    const df = docs.filter((d) => d.tf[i]! > 0).length;
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  });
  return docs
    .map((d) => {
      let score = 0;
      for (let i = 0; i < q.length; i++) {
        const f = d.tf[i]!;
        if (!f) continue;
        score += idf[i]! * ((f * (k1 + 1)) / (f + k1 * (1 - b + (b * d.len) / avg)));
      }
      return { id: d.id, score };
    })
    .filter((x) => x.score > 0)
    .sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
    .slice(0, k)
    .map((x) => x.id);
}

/** Word n-grams (1–3) of a query, lower case, as candidate entity names; at most `max`, longest first. */
export function phrases(query: string, max = 64): string[] {
  const words = query
    .toLowerCase()
    .split(/[^\p{L}\p{N}_-]+/u)
    .filter((w) => w.length > 0);
  const out = new Set<string>();
  for (let n = 3; n >= 1; n--)
    for (let i = 0; i + n <= words.length; i++) {
      const gram = words.slice(i, i + n);
      // a lone stop word or a one-letter word names nothing
      if (n === 1 && (gram[0]!.length < 3 || STOP.has(gram[0]!))) continue;
      out.add(gram.join(' '));
    }
  return [...out].slice(0, max);
}

/** Subjects that name no one in particular: a query saying "we" or "you" does not point at a speaker. */
const PRONOUNS = new Set(['me', 'we', 'us', 'you', 'he', 'him', 'she', 'her', 'they', 'them', 'it', 'user']);

/**
 * The words a subject is matched by: lower case, split at anything not a letter or digit (so
 * "payments-api" is "payments api" and "Melanie's" is "melanie"), one-letter words dropped.
 */
export function subjectWords(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 1);
}

/**
 * Does the query name the record's subject? True when the subject's words occur in the query's words
 * (`subjectWords` of the query, split once per recall) as one contiguous run: "When did Melanie run a
 * race?" names "Melanie", "what does the payments API store" names "payments-api". A subject made of
 * pronouns or one-letter words names nothing. Pure.
 */
export function namesSubject(queryWords: readonly string[], subject: string): boolean {
  const s = subjectWords(subject);
  if (s.length === 0 || s.every((w) => PRONOUNS.has(w))) return false;
  for (let i = 0; i + s.length <= queryWords.length; i++)
    if (s.every((w, j) => queryWords[i + j] === w)) return true;
  return false;
}
