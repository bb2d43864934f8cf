/**
 * Normalize — stage 4 of the ingest pipeline: canonical wording and time expressions (their calendar and
 * words: time-vocabulary.ts; LoCoMo's session timestamps: session-date.ts).
 *
 * Pure: no clock, no randomness, no I/O. The only notion of "now" is the anchor the caller passes in,
 * which is the episode's `occurredAt` (never the ingest time), so re-ingesting an old transcript resolves
 * "yesterday" exactly as it did the first time.
 *
 * Time rules (decisions, documented so callers and reviewers can hold us to them):
 *  - Every resolved expression is a half-open, UTC-aligned period [validFrom, validTo). Days start at
 *    00:00Z, weeks on Monday (ISO 8601), months on the 1st, years on 1 January. A bare absolute date is the
 *    period of that day. Whether a statement holds only during that period (an event: "yesterday I ran a
 *    marathon") or from then on (a state: "last May we moved to Berlin") is the caller's decision per
 *    record class: validFrom is always the start of the period, validTo its end.
 *  - timeSource: STATED when the expression carries an explicit year ("3 March 2024", "2024-03-03",
 *    "in 2022", "May 2023"); INFERRED when it is resolved against the anchor ("yesterday", "last May",
 *    "3 March" without a year); DEFAULTED when there is no (recognised) expression: validFrom = anchor,
 *    validTo = null.
 *  - "yesterday" / "today" / "tonight" / "this morning" / "last night" / "tomorrow" / "the day before
 *    yesterday" / "the day after tomorrow": that day.
 *  - "last|this|next week|month|year|weekend": the previous / current / following period containing the
 *    anchor. A weekend is Saturday 00:00 to Monday 00:00 of an ISO week, so on any day of the week
 *    "last weekend" is the weekend of the previous ISO week (on a Sunday that is the weekend a week ago,
 *    not the day before).
 *  - "N days|weeks|months|years|weekends ago" and "in N …" / "N … from now": the period of that unit
 *    shifted by ±N from the anchor's period, so "1 week ago" ≡ "last week" and "in two weeks" is the ISO week
 *    two weeks after the anchor's week. N is digits, one..twelve, "a"/"an" (1), "a couple of" (2) or
 *    "a few" (3: an approximation, still INFERRED).
 *  - "last <Weekday>": the most recent such day strictly before the anchor day; "next <Weekday>": the first
 *    such day strictly after it (said on a Monday, "next Monday" is a week later); "this <Weekday>": that
 *    day in the anchor's ISO week. A bare weekday ("on Friday") is too ambiguous and is not resolved.
 *  - "last May": the most recent May strictly before the anchor's month — said in May it is the previous
 *    year's May (for the current one people say "this May" or "earlier this month").
 *    "next May": the first May strictly after the anchor's month. "this May": May of the anchor's year.
 *  - "in|during|early|late|mid May" (no year): the May nearest the anchor — the anchor's own month when it is
 *    May. Past and future readings are both common ("I went camping in July", said in October; "we fly out in
 *    January", said in December), and the nearest occurrence gets both right where "next-or-current" gets the
 *    first wrong. On an exact tie (six months either way) the future one wins.
 *  - A day and month without a year ("on 3 March", "March 3rd") likewise resolves to the nearest such date
 *    (future on a tie); 29 February picks the nearest leap year.
 *  - Lower-case "may" is only a month next to a day or a year (it is usually the verb: "this may break").
 *  - An invalid calendar date ("31 February 2023") is not an expression at all.
 */
import { badInput } from '../domain/errors.ts';
import type { TimeSource } from '../domain/model.ts';
import {
  DAY_MS,
  dayPeriod,
  dayStart,
  MON,
  MONTH_FULL,
  monthOf,
  monthPeriod,
  nearest,
  NUM,
  ORD,
  parseCount,
  shifted,
  UNIT,
  validDate,
  WEEKDAYS,
  yearFrom,
  yearPeriod,
  type Period,
  type Unit,
} from './time-vocabulary.ts';

// ---------------------------------------------------------------------------------------------------------
// Canonical text
// ---------------------------------------------------------------------------------------------------------

const ALWAYS_INVISIBLE_RE = /[\u200B\u2060\uFEFF\u180E\u00AD]/g;
/** ZWJ / ZWNJ are meaningful inside emoji sequences and non-Latin scripts: only drop them next to ASCII. */
const JOINER_RE = /[\u200C\u200D]/g;
const SINGLE_QUOTES_RE = /[\u2018\u2019\u201A\u201B\u2032\u02BC]/g;
const DOUBLE_QUOTES_RE = /[\u201C\u201D\u201E\u201F\u2033\u00AB\u00BB]/g;
const HYPHENS_RE = /[\u2010\u2011\u2012\u2013\u2212\uFE63\uFF0D]/g;
const LONG_DASHES_RE = /[\u2014\u2015\uFE58]/g;
const WHITESPACE_RE = /[\s\u00A0\u2000-\u200A\u202F\u205F\u3000]+/g;

/**
 * Canonical wording: NFC, zero-width characters removed, typographic quotes and dashes folded to ASCII
 * (an em dash becomes a spaced hyphen), whitespace runs collapsed to one space, trimmed. Never changes words.
 */
export function canonicalText(s: string): string {
  const noInvisible = s.normalize('NFC').replace(ALWAYS_INVISIBLE_RE, '');
  const noJoiners = noInvisible.replace(JOINER_RE, (j, offset: number, whole: string) => {
    const before = whole.charCodeAt(offset - 1);
    const after = whole.charCodeAt(offset + j.length);
    const asciiNeighbour = (Number.isNaN(before) || before < 0x80) && (Number.isNaN(after) || after < 0x80);
    return asciiNeighbour ? '' : j;
  });
  return noJoiners
    .replace(SINGLE_QUOTES_RE, "'")
    .replace(DOUBLE_QUOTES_RE, '"')
    .replace(HYPHENS_RE, '-')
    .replace(LONG_DASHES_RE, ' - ')
    .replace(WHITESPACE_RE, ' ')
    .trim();
}

// ---------------------------------------------------------------------------------------------------------
// Rules
// ---------------------------------------------------------------------------------------------------------

interface Resolved extends Period {
  source: 'STATED' | 'INFERRED';
}

interface TimeRule {
  re: RegExp;
  /** Null when the match is not a real expression (invalid date, the verb "may"). */
  resolve(m: RegExpExecArray, anchor: number): Resolved | null;
}

const stated = (p: Period | null): Resolved | null => (p ? { ...p, source: 'STATED' } : null);
const inferred = (p: Period | null): Resolved | null => (p ? { ...p, source: 'INFERRED' } : null);

const rx = (source: string): RegExp => new RegExp(source, 'gi');

function absoluteDay(y: string | undefined, m: number | null, d: string | undefined): Period | null {
  const year = yearFrom(y);
  if (year === null || m === null) return null;
  const t = validDate(year, m, Number(d));
  return t === null ? null : dayPeriod(t);
}

/** A day and month without a year: the nearest such date to the anchor. */
function yearlessDay(anchor: number, m: number | null, d: string | undefined): Period | null {
  if (m === null) return null;
  const ay = new Date(anchor).getUTCFullYear();
  const candidates: number[] = [];
  for (let y = ay - 4; y <= ay + 4; y++) {
    const t = validDate(y, m, Number(d));
    if (t !== null) candidates.push(t);
  }
  const best = nearest(dayStart(anchor), candidates);
  return best === null ? null : dayPeriod(best);
}

const RULES: readonly TimeRule[] = [
  // --- absolute, with a year: STATED -------------------------------------------------------------------
  {
    re: rx(`\\b(\\d{4})-(\\d{1,2})-(\\d{1,2})(?![\\d-])`),
    resolve: (m) => stated(absoluteDay(m[1], Number(m[2]) - 1, m[3])),
  },
  {
    re: rx(`\\b(\\d{4})/(\\d{1,2})/(\\d{1,2})(?![\\d/])`),
    resolve: (m) => stated(absoluteDay(m[1], Number(m[2]) - 1, m[3])),
  },
  {
    re: rx(`\\b(\\d{1,2})${ORD}\\s+(?:of\\s+)?${MON},?\\s+(\\d{4})\\b`),
    resolve: (m) => stated(absoluteDay(m[3], monthOf(m[2]), m[1])),
  },
  {
    re: rx(`\\b${MON}\\s+(\\d{1,2})${ORD},?\\s+(\\d{4})\\b`),
    resolve: (m) => stated(absoluteDay(m[3], monthOf(m[1]), m[2])),
  },
  {
    // Not after a day number: an impossible "31 April 2023" must not degrade to "April 2023".
    re: rx(
      `\\b(?<!\\d(?:st|nd|rd|th)?\\s{1,8}(?:of\\s{1,8})?)(?:(?:in|during|of)\\s+)?${MON},?\\s+(\\d{4})\\b`,
    ),
    resolve: (m) => {
      const y = yearFrom(m[2]);
      const mo = monthOf(m[1]);
      return y === null || mo === null ? null : stated(monthPeriod(y, mo));
    },
  },
  {
    re: rx(`\\b(?:in|during)\\s+(?:the\\s+year\\s+)?((?:1[89]|20|21)\\d{2})\\b(?![-/]\\d)`),
    resolve: (m) => {
      const y = yearFrom(m[1]);
      return y === null ? null : stated(yearPeriod(y));
    },
  },
  // --- relative: INFERRED ------------------------------------------------------------------------------
  {
    re: rx(
      `\\b(the\\s+day\\s+before\\s+yesterday|the\\s+day\\s+after\\s+tomorrow|yesterday|today|tonight|tomorrow|last\\s+night|this\\s+(?:morning|afternoon|evening))\\b`,
    ),
    resolve: (m, anchor) => {
      const w = (m[1] ?? '').toLowerCase().replace(/\s+/g, ' ');
      const offset =
        w === 'the day before yesterday'
          ? -2
          : w === 'the day after tomorrow'
            ? 2
            : w === 'yesterday' || w === 'last night'
              ? -1
              : w === 'tomorrow'
                ? 1
                : 0;
      return inferred(shifted(anchor, 'day', offset));
    },
  },
  {
    re: rx(`\\b${NUM}\\s+${UNIT}\\s+ago\\b`),
    resolve: (m, anchor) => {
      const n = parseCount(m[1] ?? '');
      return n === null ? null : inferred(shifted(anchor, (m[2] ?? 'day').toLowerCase() as Unit, -n));
    },
  },
  {
    re: rx(`\\bin\\s+${NUM}\\s+${UNIT}\\b|\\b${NUM}\\s+${UNIT}\\s+from\\s+now\\b`),
    resolve: (m, anchor) => {
      const n = parseCount(m[1] ?? m[3] ?? '');
      const unit = (m[2] ?? m[4] ?? 'day').toLowerCase() as Unit;
      return n === null ? null : inferred(shifted(anchor, unit, n));
    },
  },
  {
    re: rx(`\\b(last|this|next)\\s+(week(?:end)?|month|year)\\b`),
    resolve: (m, anchor) => {
      const which = (m[1] ?? '').toLowerCase();
      const n = which === 'last' ? -1 : which === 'next' ? 1 : 0;
      return inferred(shifted(anchor, (m[2] ?? 'day').toLowerCase() as Unit, n));
    },
  },
  {
    re: rx(`\\b(last|this|next)\\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\\b`),
    resolve: (m, anchor) => {
      const which = (m[1] ?? '').toLowerCase();
      const target = WEEKDAYS[(m[2] ?? '').toLowerCase()] ?? 0;
      const today = dayStart(anchor);
      const dow = (new Date(today).getUTCDay() + 6) % 7;
      let delta: number;
      if (which === 'this') delta = target - dow;
      else if (which === 'last') delta = -((dow - target + 7) % 7 || 7);
      else delta = (target - dow + 7) % 7 || 7;
      return inferred(dayPeriod(today + delta * DAY_MS));
    },
  },
  // A day and month without a year (after the year-carrying forms, which win ties by length).
  {
    re: rx(`\\b(\\d{1,2})${ORD}\\s+(?:of\\s+)?${MON}(?![\\w.]|,?\\s+\\d)`),
    resolve: (m, anchor) => inferred(yearlessDay(anchor, monthOf(m[2]), m[1])),
  },
  {
    re: rx(`\\b${MON}\\s+(\\d{1,2})${ORD}(?![\\w:]|,?\\s+\\d{4}\\b)`),
    resolve: (m, anchor) => inferred(yearlessDay(anchor, monthOf(m[1]), m[2])),
  },
  {
    re: rx(
      `\\b(last|this|next|in|during|early|late|mid|in\\s+early|in\\s+late|in\\s+mid)[\\s-]+(${MONTH_FULL})\\b(?!,?\\s+\\d)`,
    ),
    resolve: (m, anchor) => {
      const word = m[2] ?? '';
      if (word === 'may') return null; // "this may break", "in may"-as-verb: only capitalised May is a month.
      const mo = monthOf(word);
      if (mo === null) return null;
      const which = (m[1] ?? '').toLowerCase();
      const a = new Date(anchor);
      const ay = a.getUTCFullYear();
      const am = a.getUTCMonth();
      let year: number;
      if (which === 'last') year = mo < am ? ay : ay - 1;
      else if (which === 'next') year = mo > am ? ay : ay + 1;
      else if (which === 'this') year = ay;
      else {
        // Compare in whole months (days would make the tie depend on month lengths).
        const here = ay * 12 + am;
        const best = nearest(here, [(ay - 1) * 12 + mo, ay * 12 + mo, (ay + 1) * 12 + mo]) ?? here;
        year = Math.floor(best / 12);
      }
      return inferred(monthPeriod(year, mo));
    },
  },
];

interface TimeMatch {
  text: string;
  start: number;
  end: number;
  rule: TimeRule;
  m: RegExpExecArray;
}

/** Any fixed anchor works for validity checks; a leap year keeps a yearless 29 February resolvable. */
const PROBE_ANCHOR = Date.UTC(2000, 5, 15);

/** The leftmost expression (the longest one when several start at the same place). */
function firstMatch(text: string, anchor: number): TimeMatch | null {
  let best: TimeMatch | null = null;
  for (const rule of RULES) {
    rule.re.lastIndex = 0;
    for (let m = rule.re.exec(text); m !== null; m = rule.re.exec(text)) {
      if (best && m.index > best.start) break;
      if (rule.resolve(m, anchor) === null) continue;
      const end = m.index + m[0].length;
      if (!best || m.index < best.start || (m.index === best.start && end > best.end)) {
        best = { text: m[0], start: m.index, end, rule, m };
      }
      break;
    }
  }
  return best;
}

/** The first recognised time expression in `text`, with offsets into `text`. */
export function findTimeExpression(text: string): { text: string; start: number; end: number } | null {
  const hit = firstMatch(text, PROBE_ANCHOR);
  return hit ? { text: hit.text, start: hit.start, end: hit.end } : null;
}

export interface ResolvedTime {
  validFrom: string;
  validTo: string | null;
  timeSource: TimeSource;
}

/**
 * Resolves a time expression (or a sentence containing one: the first expression wins) against the anchor,
 * the episode's occurredAt. See the module comment for the rules.
 */
export function resolveTime(expr: string | null, anchorIso: string): ResolvedTime {
  const anchor = Date.parse(anchorIso);
  if (Number.isNaN(anchor)) throw badInput('anchor must be an ISO-8601 instant', { anchor: anchorIso });
  const defaulted: ResolvedTime = {
    validFrom: new Date(anchor).toISOString(),
    validTo: null,
    timeSource: 'DEFAULTED',
  };
  if (expr === null || expr.trim() === '') return defaulted;
  const hit = firstMatch(canonicalText(expr), anchor);
  const resolved = hit?.rule.resolve(hit.m, anchor);
  if (!resolved) return defaulted;
  return {
    validFrom: new Date(resolved.from).toISOString(),
    validTo: new Date(resolved.to).toISOString(),
    timeSource: resolved.source,
  };
}
