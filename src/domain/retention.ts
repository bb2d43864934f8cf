import { z } from 'zod';
import { NamespacePath, RecordClasses, TenantId, type RecordClass, type RecordStatus } from './model.ts';

/**
 * Retention as data (issue 13): per tenant, namespace subtree and optionally record class, archive a
 * record N days after it was recorded and erase it M days after. `due` is the whole decision, pure: given
 * the rules, the records, the standing legal holds and now, which records to archive, which to erase and
 * which a hold keeps. The scheduler (lifecycle/retention.ts) only carries it out.
 */
export const RetentionRule = z
  .object({
    tenant: TenantId,
    namespace: NamespacePath,
    /** Only records of this class; absent: every class (a class rule wins over it at the same namespace). */
    class: z.enum(RecordClasses).optional(),
    archiveAfterDays: z.number().int().min(0).max(36_500).optional(),
    eraseAfterDays: z.number().int().min(0).max(36_500).optional(),
  })
  .strict()
  .refine((r) => r.archiveAfterDays !== undefined || r.eraseAfterDays !== undefined, 'archive or erase')
  .refine(
    (r) =>
      !(r.archiveAfterDays !== undefined && r.eraseAfterDays !== undefined) ||
      r.eraseAfterDays >= r.archiveAfterDays,
    'eraseAfterDays must not come before archiveAfterDays',
  );
export type RetentionRule = z.infer<typeof RetentionRule>;
export const RetentionRules = z.array(RetentionRule).max(1000);

export interface RetentionCandidate {
  readonly tenant: string;
  readonly id: string;
  readonly namespace: string;
  readonly class: RecordClass;
  readonly status: RecordStatus;
  /** When the record was first recorded (system time): its age is counted from here. */
  readonly createdAt: string;
  /** ERASED with its data key still there: an erasure cut short, to be finished. */
  readonly keyActive?: boolean;
}

/** A standing legal hold, as far as covering goes. */
export interface HoldScope {
  readonly id: string;
  readonly target: 'NAMESPACE' | 'RECORD';
  readonly namespace: string;
  readonly recordId: string | null;
}

export type RetentionAction = 'ARCHIVE' | 'ERASE';

export interface RetentionDecision {
  readonly tenant: string;
  readonly recordId: string;
  readonly namespace: string;
  readonly action: RetentionAction;
  /** Which rule decided, for the event's reason: `retention <tenant>:<namespace>[:<class>]`. */
  readonly rule: string;
}

export interface RetentionPlan {
  readonly due: readonly RetentionDecision[];
  /** Due, but under a standing hold: nothing happens to them until it is released. */
  readonly held: ReadonlyArray<RetentionDecision & { readonly holds: readonly string[] }>;
}

const DAY_MS = 86_400_000;
const inSubtree = (ns: string, root: string): boolean => ns === root || ns.startsWith(`${root}/`);

/** The standing holds that cover an item: its record, or a namespace at or above it. */
export function holdsCovering<H extends HoldScope>(
  holds: readonly H[],
  item: { readonly record: boolean; readonly id: string; readonly namespace: string },
): H[] {
  return holds.filter((h) =>
    h.target === 'RECORD' ? item.record && item.id === h.recordId : inSubtree(item.namespace, h.namespace),
  );
}

/** The rule that governs a record: the deepest namespace, then a class rule over a class-less one. */
export function ruleFor(rules: readonly RetentionRule[], c: RetentionCandidate): RetentionRule | undefined {
  let best: RetentionRule | undefined;
  const rank = (r: RetentionRule) => r.namespace.split('/').length * 2 + (r.class ? 1 : 0);
  for (const r of rules) {
    if (r.tenant !== c.tenant || !inSubtree(c.namespace, r.namespace)) continue;
    if (r.class && r.class !== c.class) continue;
    if (!best || rank(r) > rank(best)) best = r;
  }
  return best;
}

/** What the rule asks of the record now, if anything. Archiving leaves alone what is not live knowledge. */
function actionFor(rule: RetentionRule, c: RetentionCandidate, now: Date): RetentionAction | null {
  if (c.status === 'ERASED') return c.keyActive ? 'ERASE' : null;
  const age = now.getTime() - Date.parse(c.createdAt);
  if (rule.eraseAfterDays !== undefined && age >= rule.eraseAfterDays * DAY_MS) return 'ERASE';
  const live = c.status === 'ACTIVE' || c.status === 'CONTESTED' || c.status === 'SUPERSEDED';
  if (rule.archiveAfterDays !== undefined && live && age >= rule.archiveAfterDays * DAY_MS) return 'ARCHIVE';
  return null;
}

export function due(
  rules: readonly RetentionRule[],
  candidates: readonly RetentionCandidate[],
  holdsOf: (tenant: string) => readonly HoldScope[],
  now: Date,
): RetentionPlan {
  const out: RetentionDecision[] = [];
  const held: Array<RetentionDecision & { holds: string[] }> = [];
  for (const c of candidates) {
    const rule = ruleFor(rules, c);
    const action = rule ? actionFor(rule, c, now) : null;
    if (!rule || !action) continue;
    const name = `retention ${rule.tenant}:${rule.namespace}${rule.class ? `:${rule.class}` : ''}`;
    const d = { tenant: c.tenant, recordId: c.id, namespace: c.namespace, action, rule: name };
    const holds = holdsCovering(holdsOf(c.tenant), { record: true, id: c.id, namespace: c.namespace });
    if (holds.length) held.push({ ...d, holds: holds.map((h) => h.id) });
    else out.push(d);
  }
  return { due: out, held };
}
