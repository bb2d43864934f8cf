/**
 * Temporal cues. A question about when something happened ("When did Ana move?", "What year…", "How long
 * ago…") is answered by a statement that places the event in time ("we moved last May", "two weeks ago",
 * "in 2019"): the date itself is the record's day (its validFrom), but the words that anchor the event in
 * time are in the text. So for a when-question the `temporal` arm re-ranks the candidates the other arms
 * found, keeping those whose text carries a time expression, in their fused order: one more vote for them
 * in the fusion. It never adds a candidate no other arm found, and reads nothing but those candidates (which
 * are already filtered by entitlement). Pure.
 */

/** A question that asks for a time: "when", "what date/day/month/year/time", "how long ago", "since when". */
const WHEN =
  /\bwhen\b|\bwhat\s+(?:date|day|month|year|time|week|weekend)\b|\bwhich\s+(?:date|day|month|year|week)\b|\bhow\s+long\s+ago\b/i;

/**
 * English time expressions: relative days and periods, weekdays, months (not "May", mostly the verb),
 * years, spans ("two weeks"), "ago", "since".
 */
const TIME = new RegExp(
  [
    String.raw`\b(?:yesterday|today|tonight|tomorrow|recently|lately|ago|since)\b`,
    String.raw`\b(?:last|next|this|past|coming|previous|following)\s+(?:few\s+)?(?:night|morning|evening|week|weekend|month|year|summer|winter|spring|fall|autumn|season|(?:mon|tues|wednes|thurs|fri|satur|sun)day)s?\b`,
    String.raw`\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b`,
    String.raw`\b(?:january|february|march|april|june|july|august|september|october|november|december)\b`,
    String.raw`\b(?:19|20)\d{2}s?\b`,
    String.raw`\b(?:a|one|two|three|four|five|six|seven|eight|nine|ten|few|couple\s+of|\d+)\s+(?:days?|weeks?|months?|years?)\b`,
  ].join('|'),
  'i',
);

/** Does the query ask when (a time, a date, how long ago)? */
export function asksWhen(query: string): boolean {
  return typeof query === 'string' && WHEN.test(query.slice(0, 2000));
}

/** Does the text place something in time (a relative day, weekday, month, year or a span "two weeks")? */
export function hasTimeExpression(text: string): boolean {
  return typeof text === 'string' && TIME.test(text.slice(0, 4000));
}

/**
 * The temporal arm's list: the ids of `candidates` (already in rank order, best first) whose text carries
 * a time expression, when the query asks when; otherwise empty. Order is kept; repeats keep their first.
 */
export function temporalRanking(
  query: string,
  candidates: readonly string[],
  textOf: (id: string) => string | undefined,
  k: number,
): string[] {
  if (!asksWhen(query)) return [];
  const out: string[] = [];
  const seen = new Set<string>();
  for (const id of candidates) {
    if (out.length >= k) break;
    if (seen.has(id)) continue;
    seen.add(id);
    const text = textOf(id);
    if (text !== undefined && hasTimeExpression(text)) out.push(id);
  }
  return out;
}
