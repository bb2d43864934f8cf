import { RecordClasses, type RecordClass } from './model.ts';

/**
 * Separation of duties for review. Pure: the write service uses it to refuse early (nothing appended),
 * the fold uses it again as the authority, so a race or a hand-made event cannot get around it.
 *
 * A party is `iss|sub`: the principal of a command and every actor of its delegation chain. An approval
 * is the proposer's own when any party to it was a party to the proposal (alice, alice's agent, or the
 * agent alice proposed through, acting for someone else).
 */

/** Per class: how many approvers other than the proposer a record needs (0 = one approval by anyone). */
export type ApproverRules = Readonly<Record<RecordClass, number>>;

export const MAX_APPROVERS = 5;
/** The default of MUNINN_REVIEW_APPROVERS. */
export const DEFAULT_APPROVER_RULES = 'NORMATIVE=1';
/** Classes that always need someone other than the proposer: configuration may raise, never lower, this. */
const SEPARATED_CLASSES: ReadonlySet<RecordClass> = new Set(['NORMATIVE']);

/**
 * Parses `CLASS=N,…` (`*=N` sets the default of unlisted classes, itself 0). NORMATIVE below 1 is refused:
 * a norm reaches the instruction channel, so the proposer alone never decides it.
 */
export function parseApproverRules(spec: string): { rules: ApproverRules; problems: string[] } {
  const problems: string[] = [];
  const given = new Map<string, number>();
  for (const entry of spec
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    const m = /^([A-Z_*]+)\s*=\s*(\d+)$/.exec(entry);
    const cls = m?.[1];
    if (!m || !cls || (cls !== '*' && !(RecordClasses as readonly string[]).includes(cls))) {
      problems.push(`"${entry}" is not CLASS=N with CLASS one of ${RecordClasses.join(', ')} or *`);
      continue;
    }
    const n = Number(m[2]);
    if (n > MAX_APPROVERS) problems.push(`${cls}=${n}: at most ${MAX_APPROVERS} approvers`);
    if (SEPARATED_CLASSES.has(cls as RecordClass) && n < 1)
      problems.push(`${cls}=${n}: ${cls} records need at least one approver other than the proposer`);
    given.set(cls, Math.min(n, MAX_APPROVERS));
  }
  const fallback = given.get('*') ?? 0;
  const rules = Object.fromEntries(
    RecordClasses.map((c) => [c, Math.max(given.get(c) ?? fallback, SEPARATED_CLASSES.has(c) ? 1 : 0)]),
  ) as Record<RecordClass, number>;
  return { rules, problems };
}

export const isInjectionFlag = (flag: string): boolean => flag.startsWith('injection:');

/**
 * Approvers other than the proposer this record needs: the class's rule, and at least one for NORMATIVE
 * records and for anything screening flagged as a possible injection.
 */
export function approversRequired(
  configured: number,
  record: { readonly class: RecordClass; readonly flags: readonly string[] },
): number {
  const floor = SEPARATED_CLASSES.has(record.class) || record.flags.some(isInjectionFlag) ? 1 : 0;
  return Math.max(configured, floor);
}

/** The parties to a command: its principal, then each actor of its chain (an actor's issuer defaults to the principal's). */
export function partiesOf(
  principal: { readonly iss: string; readonly sub: string },
  actors: ReadonlyArray<{ readonly iss?: string | null | undefined; readonly sub: string }>,
): string[] {
  return [`${principal.iss}|${principal.sub}`, ...actors.map((a) => `${a.iss ?? principal.iss}|${a.sub}`)];
}

/** One recorded approval: who (`by` = the principal, `via` = its actors), when, and by which event. */
export interface Approval {
  readonly by: string;
  readonly via: readonly string[];
  readonly at: string;
  readonly eventId: string;
}

const partiesOfApproval = (a: Pick<Approval, 'by' | 'via'>): string[] => [a.by, ...a.via];
const shares = (a: readonly string[], b: readonly string[]): boolean => a.some((x) => b.includes(x));

export type ApprovalDecision =
  /** A party to the proposal approving it where separation applies. */
  | { readonly kind: 'SELF' }
  /** A party to an approval already recorded approving again. */
  | { readonly kind: 'AGAIN' }
  /** Recorded; the record waits for more approvers. */
  | { readonly kind: 'PARTIAL'; readonly have: number; readonly need: number }
  /** This approval completes the review: the record becomes ACTIVE. */
  | { readonly kind: 'FINAL'; readonly have: number; readonly need: number };

/**
 * What one more approval does. `required` is from `approversRequired`; with 0 any single approval (the
 * proposer's included) completes the review. Approvals count once per party: no two counted approvals
 * share a principal or an actor, so one agent acting for two people is one approver.
 */
export function decideApproval(
  proposal: readonly string[],
  prior: ReadonlyArray<Pick<Approval, 'by' | 'via'>>,
  approval: Pick<Approval, 'by' | 'via'>,
  required: number,
): ApprovalDecision {
  const mine = partiesOfApproval(approval);
  if (required >= 1 && shares(mine, proposal)) return { kind: 'SELF' };
  if (prior.some((p) => shares(partiesOfApproval(p), mine))) return { kind: 'AGAIN' };
  const counted = prior.filter((p) => required === 0 || !shares(partiesOfApproval(p), proposal)).length;
  const need = Math.max(1, required);
  const have = counted + 1;
  return have >= need ? { kind: 'FINAL', have, need } : { kind: 'PARTIAL', have, need };
}

/** Machine-readable reason codes of review refusals (also in receipts and error details). */
export const ReviewReasons = {
  SELF: 'review:self-approval',
  AGAIN: 'review:already-approved',
  PARTIAL: 'review:awaiting-approvers',
} as const;

export function describeApproval(d: ApprovalDecision): string {
  switch (d.kind) {
    case 'SELF':
      return `${ReviewReasons.SELF} — this record needs a reviewer other than its proposer (or the proposer's agents)`;
    case 'AGAIN':
      return `${ReviewReasons.AGAIN} — this reviewer (or one of its agents) already approved this record`;
    case 'PARTIAL':
      return `${ReviewReasons.PARTIAL} — ${d.have} of ${d.need} approvals by reviewers other than the proposer`;
    case 'FINAL':
      return `approved (${d.have} of ${d.need})`;
  }
}
