import type { RecordStatus } from './model.ts';

/**
 * A namespace's health scorecard (seed 002, "Health scorecard"), pure: figures over the records of a
 * namespace subtree the caller may read. The graph gives one row per record; `now` is passed in.
 */

/** What the scorecard needs of one record. */
export interface ScoreRow {
  readonly status: RecordStatus;
  readonly validTo: string | null;
  /** `ext["muninn:reviewBy"]`, when the record carries one. */
  readonly reviewBy: string | null;
  readonly createdAt: string;
  /** When a review approval made it ACTIVE (null: never approved by review). */
  readonly approvedAt: string | null;
  /** Whether it is about at least one entity. */
  readonly linked: boolean;
  readonly utility: number;
  readonly votes: number;
}

export interface Scorecard {
  /** Every record in scope, any status. */
  readonly records: number;
  /** ACTIVE or CONTESTED: what recall serves. */
  readonly live: number;
  /** Waiting for review. */
  readonly candidates: number;
  /** Share of live records about at least one entity (reachable by the graph arm); null without live records. */
  readonly coverage: number | null;
  /** Share of live records within their validity and before their reviewBy; null without live records. */
  readonly freshness: number | null;
  /** Share of live records that are CONTESTED; null without live records. */
  readonly contestRate: number | null;
  /** Median milliseconds from proposal to the approval that activated it; null when none was reviewed. */
  readonly reviewLatencyMs: number | null;
  /** How many records a review approved (the latency's sample). */
  readonly reviewed: number;
  /** Mean utility of the live records with recall feedback; null when none has any. */
  readonly utility: number | null;
  /** How many live records have recall feedback (the utility's sample). */
  readonly withFeedback: number;
}

const LIVE: readonly RecordStatus[] = ['ACTIVE', 'CONTESTED'];
const round = (x: number): number => Math.round(x * 1000) / 1000;
const share = (n: number, of: number): number | null => (of === 0 ? null : round(n / of));

/** The median of a list of numbers (the mean of the two middle ones for an even count); null when empty. */
export function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function scorecardOf(rows: readonly ScoreRow[], now: Date): Scorecard {
  const t = now.toISOString();
  const live = rows.filter((r) => LIVE.includes(r.status));
  const fresh = live.filter(
    (r) => (r.validTo === null || r.validTo > t) && (r.reviewBy === null || r.reviewBy > t),
  );
  const latencies = rows
    .filter((r) => r.approvedAt !== null)
    .map((r) => Date.parse(r.approvedAt!) - Date.parse(r.createdAt));
  const rated = live.filter((r) => r.votes > 0);
  const latency = median(latencies);
  return {
    records: rows.length,
    live: live.length,
    candidates: rows.filter((r) => r.status === 'CANDIDATE').length,
    coverage: share(live.filter((r) => r.linked).length, live.length),
    freshness: share(fresh.length, live.length),
    contestRate: share(live.filter((r) => r.status === 'CONTESTED').length, live.length),
    reviewLatencyMs: latency === null ? null : Math.round(latency),
    reviewed: latencies.length,
    utility: rated.length ? round(rated.reduce((s, r) => s + r.utility, 0) / rated.length) : null,
    withFeedback: rated.length,
  };
}

/** The extension key a record's review date is written under (extension keys are prefixed). */
export const REVIEW_BY_EXT = 'muninn:reviewBy';

/** `ext["muninn:reviewBy"]` when it is an ISO instant; anything else is no review date. */
export function reviewByOf(ext: Readonly<Record<string, unknown>>): string | null {
  const v = ext[REVIEW_BY_EXT];
  if (typeof v !== 'string' || Number.isNaN(Date.parse(v))) return null;
  return new Date(Date.parse(v)).toISOString();
}
