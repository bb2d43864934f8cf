import { terms as lexicalTerms, type LexicalCandidate } from '../../domain/lexical-terms.ts';
import type { ArmQuery } from '../../ports/graph.ts';
import type { Executor } from './executor.ts';
import { LEXICAL_LIST, lexicalCandidate, lexicalFromList } from './mapping.ts';
import { VisibleShares } from './recent.ts';
import { ARM_WHERE, armParams, scopeClause } from './scope.ts';

/** Words of a free-text query as a Lucene OR query, every special character escaped. */
export function luceneQuery(text: string): string {
  // The words the visible-candidate ranking scores (one split for both), Lucene specials escaped. The
  // index's English analyzer stems them (and drops stop words) as the ranking does, so plain words find
  // every form; `word*` prefix terms instead cost the whole-tenant search ~9 ms (bench:recall, 100k).
  const words = lexicalTerms(text)
    .slice(0, 32)
    .map((w) => w.replace(/[+\-!(){}[\]^"~*?:\\/&|]/g, (c) => `\\${c}`));
  return [...new Set(words)].join(' OR ');
}

interface Window {
  readonly visible: LexicalCandidate[];
  /** Every visible match is in `visible`: it holds `fetch` of them, or Lucene had no more than it returned. */
  readonly complete: boolean;
  /** The share of Lucene's hits that passed the arm filter, as far as the filter went. */
  readonly share: number;
}

/**
 * The lexical arm's fulltext search: the best `fetch` matches the caller may see, by Lucene's score of the
 * query words alone, best first.
 *
 * Two Lucene queries give that answer. The scoped one requires the request's scope terms (scope.ts), so
 * Lucene scores only what lies in the request's namespaces of this tenant; the term is a filter (boost 0,
 * which Lucene runs as a non-scoring clause), so it never changes the order. The unscoped one asks for
 * the words alone and leaves the scope to the WHERE, which every hit passes through either way. Ranked
 * by the same score, the visible hits come in the same order from both, so the first `fetch` of them are
 * the same records — apart from which of several equally scored hits fill the last places, an order
 * Lucene leaves to the query (180 whole-tenant bench queries, 2026-12-05: 125 the same list, 55 differing
 * only among hits tied at the cut; test/contract/lexical-search.test.ts holds distinct scores equal).
 *
 * They cost differently. Requiring a term that nearly every document holds makes Lucene walk both
 * posting lists in step: over a 100k-record tenant that is the whole index, 2.4 ms a search against 0.7
 * for the words alone (server time, bench:recall's whole-tenant queries, 2026-12-05). A small scope is
 * the other way round: its term is rare and narrows the search. So a request over at least `unscopedFrom`
 * records tries the words alone, and keeps doing so while at least half of the hits it gets are visible
 * to it (its share, remembered for a minute); otherwise, and for every smaller request, the scoped query.
 * A wrong guess costs one search, never a different answer.
 */
export class LexicalSearch {
  /** Lucene's window stops growing here (past it, the arm keeps what it found). */
  static readonly WINDOW_MAX = 1_000_000;
  /** Each caller scope's visible share of the unscoped hits. */
  private readonly shares = new VisibleShares();

  constructor(
    private readonly db: Executor,
    /** The request size (in records) from which the unscoped query is tried first. */
    private readonly unscopedFrom: number,
  ) {}

  async search(q: ArmQuery, text: string, fetch: number, size: number): Promise<LexicalCandidate[]> {
    const words = luceneQuery(text);
    if (!words) return [];
    if (q.knownAt !== null) return this.asOf(q, words, fetch);
    if (size >= this.unscopedFrom && (this.shares.get(q) ?? 1) >= 0.5) {
      const got = await this.window(q, words, fetch, 2 * fetch);
      this.shares.set(q, got.share);
      if (got.complete) return got.visible;
    }
    // Lucene keeps only its best `window` hits (a bounded top-N instead of sorting every match: a whole
    // tenant has tens of thousands); when fewer than `fetch` of them are visible and Lucene had more, the
    // window grows, so the result is the best `fetch` visible matches.
    const lucene = `+${scopeClause(q.scope.tenant, q.namespace)}^0 +(${words})`;
    for (let window = fetch * 2; ; window *= 8) {
      const got = await this.window(q, lucene, fetch, window);
      if (got.complete || window >= LexicalSearch.WINDOW_MAX) return got.visible;
    }
  }

  /** Lucene's best `window` hits for `lucene`, filtered in score order until `fetch` pass. */
  private async window(q: ArmQuery, lucene: string, fetch: number, window: number): Promise<Window> {
    const res = await this.db.read(
      'recall.lexical',
      `CALL db.index.fulltext.queryNodes('record_search_en', $lucene, {limit: toInteger($window)}) YIELD node
       WITH collect(node) AS hits
       CALL (hits) {
         UNWIND range(0, size(hits) - 1) AS i
         WITH hits[i] AS n, i WHERE ${ARM_WHERE}
         WITH n, i LIMIT toInteger($fetch)
         RETURN collect(${LEXICAL_LIST}) AS visible, max(i) AS last
       }
       RETURN size(hits) AS matched, visible, last`,
      { ...armParams(q), lucene, window, fetch },
    );
    const row = res.records[0];
    const matched = Number(row?.get('matched') ?? 0);
    const visible = ((row?.get('visible') ?? []) as unknown[][]).map(lexicalFromList);
    const full = visible.length >= fetch;
    // The filter went as far as the fetch-th visible hit, or through every hit when fewer passed.
    const seen = full ? Number(row?.get('last')) + 1 : matched;
    return { visible, complete: full || matched < window, share: seen > 0 ? visible.length / seen : 1 };
  }

  /** As known at a past time, the text searched is the text each record had then (its revisions). */
  private async asOf(q: ArmQuery, words: string, fetch: number): Promise<LexicalCandidate[]> {
    const res = await this.db.read(
      'recall.lexicalAsOf',
      `CALL db.index.fulltext.queryNodes('revision_text', $words) YIELD node AS v, score
       WHERE v.tenant = $tenant AND v.recordedAt <= $knownAt AND (v.retiredAt IS NULL OR v.retiredAt > $knownAt)
       MATCH (n:Record {tenant: $tenant, id: v.recordId}) WHERE ${ARM_WHERE}
       RETURN n.id AS id, v.subject AS subject, v.text AS text, n.context AS context, n.validFrom AS validFrom
       ORDER BY score DESC, id LIMIT toInteger($fetch)`,
      { ...armParams(q), words, fetch },
    );
    return res.records.map((r) => lexicalCandidate(r.toObject()));
  }
}
