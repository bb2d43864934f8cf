import type { EventOf } from './events.ts';
import type {
  Effect,
  FeedbackCounts,
  FeedbackVerdict,
  ProjectionView,
  RecordState,
} from './projection-state.ts';
import { receiptOf } from './receipts.ts';
import { currentRevision } from './revisions.ts';

/**
 * A record's utility in [-1, 1] from its recall feedback: used pulls up, wrong pulls down twice as hard,
 * ignored a little; two pseudo-observations keep one vote from swinging it to an extreme.
 */
export function utilityOf(f: FeedbackCounts): number {
  const n = f.used + f.ignored + f.wrong;
  if (n === 0) return 0;
  const u = (f.used - 2 * f.wrong - 0.25 * f.ignored) / (n + 2);
  return Math.max(-1, Math.min(1, Math.round(u * 1000) / 1000));
}

/** One caller, one vote per record: a caller's new verdict (in any recall) replaces their earlier one. */
export function feedbackRecorded(view: ProjectionView, e: EventOf<'FeedbackRecorded'>): Effect {
  const p = e.payload;
  const r = view.record(e.tenant, p.recordId);
  if (!r) return { receipt: receiptOf(e, 'REJECTED', p.recordId, null, 'record not found') };
  const who = `${e.principal.iss}|${e.principal.sub}`;
  const before = r.votes[who];
  const counts: { -readonly [K in keyof FeedbackCounts]: number } = { ...r.feedback };
  if (before) counts[countOf(before)] = Math.max(0, counts[countOf(before)] - 1);
  counts[countOf(p.verdict)] += 1;
  const record: RecordState = { ...r, feedback: counts, votes: { ...r.votes, [who]: p.verdict } };
  const reason = before
    ? `feedback ${p.verdict} (replaces this caller's ${before})`
    : `feedback ${p.verdict}`;
  return {
    record,
    receipt: receiptOf(e, 'ADMITTED', p.recordId, currentRevision(r).version, reason),
  };
}

const countOf = (v: FeedbackVerdict): keyof FeedbackCounts =>
  v === 'USED' ? 'used' : v === 'IGNORED' ? 'ignored' : 'wrong';
