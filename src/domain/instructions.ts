/**
 * The one rule for what may reach a harness's instruction channel (ARCHITECTURE invariant 8): recall's
 * `<muninn-instructions>` section and the file projections (`muninn project agents-md`) both ask this
 * function and nothing else. "Approved" is recorded, not inferred: `approvedAt` is set by a review
 * approval (fold.ts), so a NORMATIVE record a permissive admission policy let in unreviewed stays data.
 */
export function isApprovedInstruction(r: {
  readonly class: string;
  readonly status: string;
  readonly approvedAt: string | null;
}): boolean {
  return r.class === 'NORMATIVE' && r.status === 'ACTIVE' && r.approvedAt !== null;
}
