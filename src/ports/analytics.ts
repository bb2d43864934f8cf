import type { RecordClass } from '../domain/model.ts';
import type { ReadScope } from '../domain/policy.ts';
import type { AsOf, Page, RecordQuery, RevisionView } from './graph.ts';

/**
 * Competency queries for analysts: complete answers, never ranked. Every query compiles the caller's
 * ReadScope through the same predicate as `records`, so nothing invisible is counted, listed or linked.
 */

export interface CountBucket {
  readonly key: string;
  readonly count: number;
}

export interface RecordCounts {
  readonly total: number;
  readonly byClass: readonly CountBucket[];
  readonly byStatus: readonly CountBucket[];
  readonly byPredicate: readonly CountBucket[];
  /** Keyed by entity id; a record about two entities counts for both. */
  readonly byEntity: readonly CountBucket[];
}

/** A typed relation between two records the caller may see. */
export interface RecordLink {
  readonly fromId: string;
  readonly type: string;
  readonly toId: string;
  readonly confidence: number;
  readonly reason: string | null;
  readonly recordedAt: string;
}

export const ChangeKinds = ['CREATED', 'SUPERSEDED', 'RETRACTED'] as const;
export type ChangeKind = (typeof ChangeKinds)[number];

export interface ChangeQuery {
  readonly namespace: string;
  readonly classes?: readonly RecordClass[] | undefined;
  readonly kinds?: readonly ChangeKind[] | undefined;
  /** System time, exclusive. */
  readonly from: string;
  /** System time, inclusive. */
  readonly to: string;
}

export interface Change {
  readonly kind: ChangeKind;
  /** System time of the change (the revision's recordedAt). */
  readonly at: string;
  readonly recordId: string;
  /** The revision that recorded the change (version 1 for CREATED). */
  readonly revision: RevisionView;
}

export interface AnalyticsReads {
  /** Counts of what `records(q, asOf)` lists, by class, status, predicate and entity. */
  recordCounts(scope: ReadScope, q: RecordQuery, asOf: AsOf): Promise<RecordCounts>;
  /** Relations between any two records `records(q, asOf)` lists; with `asOf.knownAt`, those known then. */
  linksAmong(scope: ReadScope, q: RecordQuery, asOf: AsOf): Promise<RecordLink[]>;
  /** Ids of the entities linked to `entityId` by SAME_AS, either direction (visibility is the caller's job). */
  sameAs(tenant: string, entityId: string): Promise<string[]>;
  /** Records created, superseded or retracted in (from, to] of system time, oldest first. */
  changes(scope: ReadScope, q: ChangeQuery, first: number, after: string | null): Promise<Page<Change>>;
  /** How many changes of each kind `changes` would list across all pages. */
  changeCounts(scope: ReadScope, q: ChangeQuery): Promise<CountBucket[]>;
}
