import { Sensitivities, type RecordClass, type RecordStatus, type Sensitivity } from './model.ts';
import { partiesOf } from './review.ts';

/**
 * Reclassify and rescope (issue #14, part 3): what a revision's new class, label or namespace does to a
 * record. Pure; the fold (fold.ts `revised`) applies it, the write side uses `labelChange` to decide who
 * may make it. A namespace change is a move: same id, same history, new namespace.
 */

const rank = (s: Sensitivity): number => Sensitivities.indexOf(s);

/** RAISE / LOWER / SAME: writers may raise a label; lowering it needs the review scope. */
export function labelChange(
  from: Sensitivity,
  to: Sensitivity | null | undefined,
): 'RAISE' | 'LOWER' | 'SAME' {
  if (!to || to === from) return 'SAME';
  return rank(to) > rank(from) ? 'RAISE' : 'LOWER';
}

/** Reason code of a record sent back to review by a reclassification. */
export const RECLASSIFIED_NORMATIVE = 'review:reclassified-normative';

export interface Classification {
  readonly class: RecordClass;
  readonly sensitivity: Sensitivity;
  readonly namespace: string;
}

export interface ReclassifyInput {
  readonly current: Classification & {
    readonly status: RecordStatus;
    readonly proposedBy: string;
    readonly proposedVia: readonly string[];
  };
  readonly change: {
    readonly class: RecordClass | null;
    readonly sensitivity: Sensitivity | null;
    readonly namespace: string | null;
    readonly reason: string | null;
  };
  readonly principal: { readonly iss: string; readonly sub: string };
  readonly actors: ReadonlyArray<{ readonly iss: string | null; readonly sub: string }>;
}

export interface ReclassifyResult {
  readonly next: Classification;
  /** What the revision says about the change (null when class, label and namespace stay). */
  readonly summary: string | null;
  /**
   * Set when the change makes a norm out of the record, or moves a norm into another namespace: it goes
   * back to review under the existing rules (review.ts), with the reviser as a party to the proposal.
   */
  readonly review: {
    readonly status: RecordStatus;
    readonly proposedVia: readonly string[];
    readonly reason: string;
  } | null;
}

/** Statuses a reclassification to NORMATIVE sends back to CANDIDATE (the others keep theirs). */
const LIVE: readonly RecordStatus[] = ['ACTIVE', 'CONTESTED', 'CANDIDATE'];

export function reclassify(x: ReclassifyInput): ReclassifyResult {
  const cur = x.current;
  const next: Classification = {
    class: x.change.class ?? cur.class,
    sensitivity: x.change.sensitivity ?? cur.sensitivity,
    namespace: x.change.namespace ?? cur.namespace,
  };
  const parts: string[] = [];
  if (next.class !== cur.class) parts.push(`class ${cur.class}→${next.class}`);
  if (next.sensitivity !== cur.sensitivity) parts.push(`label ${cur.sensitivity}→${next.sensitivity}`);
  if (next.namespace !== cur.namespace) parts.push(`moved ${cur.namespace}→${next.namespace}`);
  const said = x.change.reason;
  const summary = parts.length ? `${parts.join('; ')}${said ? `: ${said}` : ''}` : null;
  const becomesNorm =
    next.class === 'NORMATIVE' && (cur.class !== 'NORMATIVE' || next.namespace !== cur.namespace);
  if (!becomesNorm || !LIVE.includes(cur.status)) return { next, summary, review: null };
  // A norm reaches the instruction channel of its namespace: a new norm, or a norm in a new namespace,
  // is decided by a reviewer other than whoever made it one (the reviser joins the proposal's parties).
  const reviser = partiesOf(x.principal, x.actors).filter((p) => p !== cur.proposedBy);
  const proposedVia = [...new Set([...cur.proposedVia, ...reviser])];
  return {
    next,
    summary,
    review: { status: 'CANDIDATE', proposedVia, reason: `${RECLASSIFIED_NORMATIVE} — ${summary ?? ''}` },
  };
}
