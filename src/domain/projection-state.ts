import type { EmbeddingCache, EventOf } from './events.ts';
import type {
  Outcome,
  RecordClass,
  RecordStatus,
  Sensitivity,
  SourceSpan,
  Statement,
  TimeSource,
} from './model.ts';
import type { Approval } from './review.ts';
import type { Classification } from './reclassify.ts';
import type { RelateType, TargetKind } from './relations.ts';
import type { FindingDraft, GrantRole } from './stewardship-model.ts';

/** The projected state the fold reads (through `ProjectionView`) and returns (as an `Effect`). */

export interface RevisionState {
  readonly version: number;
  readonly statement: Statement;
  readonly status: RecordStatus;
  readonly validFrom: string;
  readonly validTo: string | null;
  readonly recordedAt: string;
  readonly retiredAt: string | null;
  readonly changesetId: string | null;
  readonly eventId: string;
  readonly reason: string | null;
  /** Who (`iss|sub`) made this revision and with which event type (stamped by MemoryState; absent on old ones). */
  readonly by?: string | null;
  readonly cause?: string | null;
  /**
   * The record's class, label and namespace while this revision was current (stamped by MemoryState;
   * absent on revisions projected before it was): what a rollback of a reclassification restores.
   */
  readonly classification?: Classification | null;
}

/** Why a record is flagged `tainted`: the path of derivation from the reverted record to it. */
export interface TaintState {
  readonly path: readonly string[];
  readonly reason: string;
  readonly eventId: string;
  readonly at: string;
}

export interface RecordState {
  readonly tenant: string;
  readonly id: string;
  readonly namespace: string;
  readonly class: RecordClass;
  readonly sensitivity: Sensitivity;
  readonly confidence: number;
  readonly timeSource: TimeSource;
  readonly rationale: string | null;
  readonly about: readonly string[];
  readonly sources: readonly SourceSpan[];
  readonly ext: Readonly<Record<string, unknown>>;
  readonly createdAt: string;
  readonly proposedBy: string;
  /** The proposer's delegation chain (`iss|sub` of each actor): parties to the proposal besides proposedBy. */
  readonly proposedVia: readonly string[];
  /** Review approvals, oldest first: the partial ones while it waits, then the one that activated it. */
  readonly approvals: readonly Approval[];
  /**
   * When a review approval made it ACTIVE (null: never approved, or approved text since revised). Only a
   * NORMATIVE record with this set is rendered as an instruction; auto-admitted norms stay data.
   */
  readonly approvedAt: string | null;
  /** Oldest first; the last one is current and has retiredAt === null. */
  readonly revisions: readonly RevisionState[];
  /** Outgoing typed relations to other records (the pipeline's relate decisions). */
  readonly relations: readonly RelationState[];
  readonly reviewReasons: readonly string[];
  readonly flags: readonly string[];
  readonly embedding: EmbeddingCache | null;
  readonly episodeId: string | null;
  /** How many times a repeat of this statement reinforced it. */
  readonly reinforcements: number;
  /** Recall feedback: how often callers used, ignored or flagged it as wrong (each caller counts once). */
  readonly feedback: FeedbackCounts;
  /** Each caller's (`iss|sub`) latest verdict: a new one replaces it in the counts instead of adding to them. */
  readonly votes: Readonly<Record<string, FeedbackVerdict>>;
  /** Records this one was derived from (propose `derivedFrom`): (:Record)-[:DERIVED_FROM]->(:Record). */
  readonly derivedFrom?: readonly string[];
  /** Set when a record it derives from was reverted (rollback-fold.ts); it then waits for review. */
  readonly taint?: TaintState | null;
}

export type FeedbackVerdict = 'USED' | 'IGNORED' | 'WRONG';

export interface FeedbackCounts {
  readonly used: number;
  readonly ignored: number;
  readonly wrong: number;
}

export const NO_FEEDBACK: FeedbackCounts = { used: 0, ignored: 0, wrong: 0 };

/** A namespace grant (see AccessGranted): who may read which subtree, up to which label, for what. */
export interface GrantState {
  readonly tenant: string;
  readonly id: string;
  /** `iss|sub` of the grantee. */
  readonly grantee: string;
  readonly namespace: string;
  readonly maxSensitivity: Sensitivity;
  readonly purposes: readonly string[] | null;
  readonly grantedBy: string;
  readonly grantedAt: string;
  readonly revokedAt: string | null;
  readonly revokeReason: string | null;
  /** What else the grant names its grantee (stewardship.ts); absent or READER: it only gives access. */
  readonly role?: GrantRole;
}

export interface RelationState {
  /** The pipeline's relate decision (EXTENDS, CONTRADICTS, SUPERSEDES) or an explicit `relate` (relations.ts). */
  readonly type: 'CONTRADICTS' | 'SUPERSEDES' | RelateType;
  readonly target: string;
  readonly confidence: number;
  readonly reason: string;
  readonly eventId: string;
  readonly recordedAt: string;
  /** What `target` names; absent = a record (the pipeline's relations). */
  readonly targetKind?: TargetKind;
  /** The edge's own validity (world time); absent = always (the pipeline's relations). */
  readonly validFrom?: string;
  readonly validTo?: string | null;
}

/**
 * The relation a record was proposed with (its pipeline relate decision), which takes effect when the
 * record becomes active: carried by the proposal event itself, unlike later `relate` edges.
 */
export const proposedRelation = (r: RecordState): RelationState | undefined =>
  r.relations.find((x) => x.eventId === r.revisions[0]?.eventId);

export interface EpisodeState {
  readonly tenant: string;
  readonly id: string;
  readonly namespace: string;
  readonly source: string;
  readonly occurredAt: string;
  readonly text: string;
  readonly turns: EventOf<'EpisodeStored'>['payload']['turns'];
  readonly chunks: EventOf<'EpisodeStored'>['payload']['chunks'];
  readonly sensitivity: Sensitivity;
  readonly secretRefs: EventOf<'EpisodeStored'>['payload']['secretRefs'];
  readonly flags: readonly string[];
  readonly recordedAt: string;
}

export interface EntityState {
  readonly tenant: string;
  readonly id: string;
  readonly name: string;
  readonly type: string | null;
  readonly aliases: readonly string[];
  readonly externalIds: readonly string[];
  readonly sameAs: { readonly entityId: string; readonly confidence: number } | null;
  readonly embedding: EmbeddingCache | null;
}

export interface Receipt {
  readonly tenant: string;
  readonly idempotencyKey: string;
  readonly commandHash: string;
  readonly eventId: string;
  readonly outcome: Outcome;
  readonly recordId: string | null;
  readonly version: number | null;
  readonly reason: string | null;
  readonly recordedAt: string;
}

/** The state the fold may read. The projector backs it with a per-batch cache over Neo4j. */
export interface ProjectionView {
  record(tenant: string, id: string): RecordState | undefined;
  entity(tenant: string, id: string): EntityState | undefined;
  receipt(tenant: string, idempotencyKey: string): Receipt | undefined;
  episode(tenant: string, id: string): EpisodeState | undefined;
  grant(tenant: string, id: string): GrantState | undefined;
  /** Legal holds (absent in views that never fold one). */
  hold?(tenant: string, id: string): HoldState | undefined;
  /** Steward findings (absent in views that never fold one). */
  finding?(tenant: string, id: string): FindingState | undefined;
}

/** What one event changes. `receipt` is absent for a redelivered command (same key, same input). */
export interface Effect {
  readonly record?: RecordState;
  /** Other records the event changed (a superseded or contested target). */
  readonly others?: readonly RecordState[];
  readonly entity?: EntityState;
  readonly episode?: EpisodeState;
  readonly grant?: GrantState;
  readonly hold?: HoldState;
  readonly finding?: FindingState;
  readonly receipt?: Receipt;
  /**
   * An item whose personal data an `Erased` tombstone removed: the receipts of its earlier events lose
   * their reasons too (they may quote the content), in this batch and in the graph.
   */
  readonly erasure?: Erasure;
}

export interface Erasure {
  readonly tenant: string;
  readonly target: 'RECORD' | 'ENTITY' | 'EPISODE';
  readonly id: string;
}

/** A legal hold as projected: it blocks erasure of what it covers until released. */
export interface HoldState {
  readonly tenant: string;
  readonly id: string;
  readonly target: 'NAMESPACE' | 'RECORD';
  /** The held subtree (NAMESPACE) or the held record's namespace (RECORD). */
  readonly namespace: string;
  readonly recordId: string | null;
  readonly reason: string;
  readonly placedBy: string;
  readonly placedAt: string;
  readonly releasedAt: string | null;
  readonly releasedBy: string | null;
  readonly releaseReason: string | null;
}

/** A steward finding as projected: a review item, open until it no longer holds or a reviewer closes it. */
export interface FindingState extends FindingDraft {
  readonly tenant: string;
  /** When it was (last) raised. */
  readonly raisedAt: string;
  /** How many times it was raised: a finding that resolved and holds again is raised once more. */
  readonly raised: number;
  readonly resolvedAt: string | null;
  readonly resolvedBy: string | null;
  readonly resolveReason: string | null;
  /** A reviewer dismissed it: it may still hold, and the steward does not raise it again. */
  readonly dismissed: boolean;
}
