import type { FindingState } from '../domain/fold.ts';
import type { ScoreRow } from '../domain/scorecard.ts';
import type {
  CandidateRow,
  ContestedRow,
  DuplicateRow,
  OrphanRow,
  StaleRow,
  UtilityRow,
} from '../domain/stewardship.ts';
import type { ReadScope } from './graph.ts';

/**
 * What the steward checks read (lifecycle/steward.ts): the service's own tenant-wide questions, each
 * asked of one tenant and answered with ids, namespaces and dates only. Never writes.
 */
export interface StewardLookups {
  /** Tenants that hold records. */
  tenants(): Promise<string[]>;
  /** Live records past `now` in validity, or carrying an `ext["muninn:reviewBy"]` (the check compares it). */
  staleRows(tenant: string, now: string): Promise<StaleRow[]>;
  /** Live CONTRADICTS pairs (at least one side CONTESTED) whose relation is older than `before`. */
  contestedRows(tenant: string, before: string): Promise<ContestedRow[]>;
  /** Entities that records were about and no live or waiting record is about now. */
  orphanRows(tenant: string): Promise<OrphanRow[]>;
  /** Pairs of live, non-observation records of one namespace with cosine ≥ `cosine` (vector index). */
  duplicateRows(tenant: string, cosine: number): Promise<DuplicateRow[]>;
  /**
   * The same, only for records whose current revision was recorded after `since` (paired with any record):
   * a new near-duplicate needs a new or changed record, so a run between full sweeps reads only those.
   */
  duplicateRowsSince(tenant: string, cosine: number, since: string): Promise<DuplicateRow[]>;
  /** The given pairs that still hold: both live, non-observation, in one namespace, cosine ≥ `cosine`. */
  duplicatePairs(
    tenant: string,
    cosine: number,
    pairs: ReadonlyArray<readonly [string, string]>,
  ): Promise<DuplicateRow[]>;
  /** Proposals waiting since before `before`. */
  candidateRows(tenant: string, before: string): Promise<CandidateRow[]>;
  /** Live records with recall feedback. */
  utilityRows(tenant: string): Promise<UtilityRow[]>;
  /** The tenant's findings, open and resolved. */
  findings(tenant: string): Promise<FindingState[]>;
}

/** The reviewers' side: findings and scorecard rows of a namespace subtree, inside the caller's scope. */
export interface StewardReads {
  /**
   * Findings in the subtree, newest first, whose every record and entity the scope may see (a finding
   * never tells about what its reader cannot read). `open`: only open (true), only resolved (false), all (null).
   */
  findings(scope: ReadScope, namespace: string, open: boolean | null, first: number): Promise<FindingState[]>;
  /** One finding by id, under the same rule (undefined when there is none or the scope may not see it). */
  finding(scope: ReadScope, id: string): Promise<FindingState | undefined>;
  /** One row per record of the subtree the scope may see. */
  scoreRows(scope: ReadScope, namespace: string): Promise<ScoreRow[]>;
}
