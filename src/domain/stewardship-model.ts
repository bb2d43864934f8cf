/**
 * Stewardship's closed sets (issue #14): the roles a namespace grant may carry, and the steward checks'
 * finding types and severities. Kept apart so that events.ts can name them without importing the checks.
 */

/** READER reads; STEWARD also stewards the subtree (its findings are theirs to review); OWNER owns it. */
export const GrantRoles = ['READER', 'STEWARD', 'OWNER'] as const;
export type GrantRole = (typeof GrantRoles)[number];

export const FindingTypes = [
  /** A live record past its validity (validTo) or its `ext["muninn:reviewBy"]`. */
  'STALE',
  /** Two records contesting each other for longer than the threshold. */
  'CONTESTED_PAIR',
  /** An entity no live record is about any more. */
  'ORPHAN_ENTITY',
  /** Two live records in one namespace whose embeddings are nearly the same. */
  'NEAR_DUPLICATE',
  /** A proposal waiting for review for longer than the threshold. */
  'CANDIDATE_WAITING',
  /** A live record recall feedback rates below the threshold. */
  'LOW_UTILITY',
] as const;
export type FindingType = (typeof FindingTypes)[number];

export const FindingSeverities = ['LOW', 'MEDIUM', 'HIGH'] as const;
export type FindingSeverity = (typeof FindingSeverities)[number];

/** A finding before it is raised: what, how bad, where, about which ids, and why (ids and dates, never content). */
export interface FindingDraft {
  readonly id: string;
  readonly type: FindingType;
  readonly severity: FindingSeverity;
  readonly namespace: string;
  readonly recordIds: readonly string[];
  readonly entityIds: readonly string[];
  readonly reason: string;
}
