/**
 * The calendar and the words of time expressions (normalize.ts's rules and session-date.ts read them):
 * UTC periods in epoch milliseconds, month and weekday names, counts in words. Pure.
 */

// ---------------------------------------------------------------------------------------------------------
// Calendar helpers (UTC, epoch milliseconds)
// ---------------------------------------------------------------------------------------------------------

export const DAY_MS = 86_400_000;

export interface Period {
  from: number;
  to: number;
}

export const dayStart = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;
const utc = (y: number, m: number, d = 1): number => Date.UTC(y, m, d);
/** Monday 00:00Z of the ISO week containing `ms`. */
const weekStart = (ms: number): number => {
  const d = dayStart(ms);
  return d - ((new Date(d).getUTCDay() + 6) % 7) * DAY_MS;
};

export const dayPeriod = (d: number): Period => ({ from: d, to: d + DAY_MS });
const weekPeriod = (w: number): Period => ({ from: w, to: w + 7 * DAY_MS });
const weekendPeriod = (w: number): Period => ({ from: w + 5 * DAY_MS, to: w + 7 * DAY_MS });
export const monthPeriod = (y: number, m: number): Period => ({ from: utc(y, m), to: utc(y, m + 1) });
export const yearPeriod = (y: number): Period => ({ from: utc(y, 0), to: utc(y + 1, 0) });

/** A calendar date, or null when it does not exist (31 February). Months are 0-based. */
export function validDate(y: number, m: number, d: number): number | null {
  if (m < 0 || m > 11 || d < 1 || d > 31) return null;
  const t = utc(y, m, d);
  const back = new Date(t);
  // Date.UTC maps years 0..99 to 1900..1999; such years are not plausible here anyway.
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== m || back.getUTCDate() !== d) return null;
  return t;
}

export type Unit = 'day' | 'week' | 'weekend' | 'month' | 'year';

/** The period of `unit` containing the anchor, shifted by n units. */
export function shifted(anchor: number, unit: Unit, n: number): Period {
  const a = new Date(anchor);
  switch (unit) {
    case 'day':
      return dayPeriod(dayStart(anchor) + n * DAY_MS);
    case 'week':
      return weekPeriod(weekStart(anchor) + n * 7 * DAY_MS);
    case 'weekend':
      return weekendPeriod(weekStart(anchor) + n * 7 * DAY_MS);
    case 'month':
      return monthPeriod(a.getUTCFullYear(), a.getUTCMonth() + n);
    case 'year':
      return yearPeriod(a.getUTCFullYear() + n);
  }
}

/** Among the same month/date in nearby years, the one nearest the anchor; future wins a tie. */
export function nearest(anchor: number, candidates: readonly number[]): number | null {
  let best: number | null = null;
  let bestDist = Infinity;
  for (const c of candidates) {
    const dist = Math.abs(c - anchor);
    if (dist < bestDist || (dist === bestDist && best !== null && c > best)) {
      best = c;
      bestDist = dist;
    }
  }
  return best;
}

// ---------------------------------------------------------------------------------------------------------
// Vocabulary
// ---------------------------------------------------------------------------------------------------------

const MONTHS: Readonly<Record<string, number>> = {
  january: 0,
  jan: 0,
  february: 1,
  feb: 1,
  march: 2,
  mar: 2,
  april: 3,
  apr: 3,
  may: 4,
  june: 5,
  jun: 5,
  july: 6,
  jul: 6,
  august: 7,
  aug: 7,
  september: 8,
  sept: 8,
  sep: 8,
  october: 9,
  oct: 9,
  november: 10,
  nov: 10,
  december: 11,
  dec: 11,
};
export const MONTH_FULL =
  'january|february|march|april|may|june|july|august|september|october|november|december';
const MONTH_ANY = `${MONTH_FULL}|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec`;
/** Month name, optionally abbreviated with a dot. */
export const MON = `(${MONTH_ANY})\\.?`;

export const WEEKDAYS: Readonly<Record<string, number>> = {
  monday: 0,
  tuesday: 1,
  wednesday: 2,
  thursday: 3,
  friday: 4,
  saturday: 5,
  sunday: 6,
};

const NUMBER_WORDS: Readonly<Record<string, number>> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
};
export const NUM =
  '(a\\s+couple\\s+of|a\\s+few|\\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|an|a)';
export const UNIT = '(day|week(?:end)?|month|year)s?';
export const ORD = '(?:st|nd|rd|th)?';

export function parseCount(s: string): number | null {
  const w = s.toLowerCase().replace(/\s+/g, ' ');
  if (w === 'a couple of') return 2;
  if (w === 'a few') return 3;
  if (/^\d+$/.test(w)) return Number(w);
  return NUMBER_WORDS[w] ?? null;
}

export const monthOf = (s: string | undefined): number | null => MONTHS[(s ?? '').toLowerCase()] ?? null;

/** A four-digit year, or null. */
export function yearFrom(s: string | undefined): number | null {
  const y = Number(s);
  return Number.isInteger(y) && y >= 1000 && y <= 9999 ? y : null;
}
