import type { EntityState, FindingState, GrantState, Receipt, RecordState } from '../domain/fold.ts';
import type { RollbackTarget } from '../domain/events.ts';
import type { RecordClass, RecordStatus, Sensitivity } from '../domain/model.ts';
import type { ReadScope } from '../domain/policy.ts';
import type { HoldScope } from '../domain/retention.ts';
import type { DerivationEdge } from '../domain/rollback-plan.ts';
import type { RecordReads } from './graph.ts';

/*
 * The write path's side of the graph port: what it looks up before it decides (receipts, grants, holds,
 * relate candidates, entity facts, a rollback's reach) and the turns it takes on a subject. Never writes.
 */

/** A stored statement the ingest pipeline may relate a new one to. */
export interface RelatedCandidate {
  readonly id: string;
  readonly namespace: string;
  readonly sensitivity: Sensitivity;
  readonly class: RecordClass;
  readonly subject: string;
  readonly predicate: string;
  readonly object: string;
  readonly text: string;
  readonly status: RecordStatus;
  readonly version: number;
  readonly confidence: number;
  /** Cosine similarity to the query vector, when found by the vector index. */
  readonly cosine: number | null;
}

/** One relate lookup of a batch: a statement's subject and its embedding. */
export interface RelateQuery {
  readonly subject: string;
  readonly vector: readonly number[] | null;
  /** The model that embedded `vector`: only records embedded by the same one are compared with it. */
  readonly modelId: string;
}

/** One entity reference of a batch, with its name's embedding and the id a new entity of it would get. */
export interface EntityProbe {
  readonly id?: string | undefined;
  readonly alias?: string | undefined;
  readonly externalId?: string | undefined;
  readonly type?: string | undefined;
  readonly vector: readonly number[] | null;
  /** The model that embedded `vector`: only entities embedded by the same one are compared with it. */
  readonly modelId: string;
  readonly defaultId: string;
}

/** What the graph knows of one probe, all among the entities the writer may see (but `defaultIdTaken`). */
export interface EntityFacts {
  /** The first visible entity with the probe's id, external id, or name/alias (of a compatible type). */
  readonly exact: EntityState | null;
  /** The visible entity whose embedding is nearest to the probe's vector (cosine), if any. */
  readonly nearest: (EntityState & { cosine: number }) | null;
  /** Whether any entity, visible or not, already has `defaultId` (never disclosed to the caller). */
  readonly defaultIdTaken: boolean;
  /** Whether that entity is one the writer may see. */
  readonly defaultIdVisible: boolean;
}

/** What a rollback plans from (tenant-wide: the command checks the caller's reach over the result). */
export interface RollbackLookups {
  /** The records the target's events changed (whole history each), and the ids of those events. */
  rollbackScope(
    tenant: string,
    target: RollbackTarget,
  ): Promise<{ records: RecordState[]; eventIds: string[] }>;
  /**
   * Derivation edges into the seeds, transitively up to `maxDepth` hops: record → record DERIVED_FROM and
   * SUPERSEDES, and record → `episode:<id>` for a record citing a seed episode in its sources.
   */
  derivations(tenant: string, seeds: readonly string[], maxDepth: number): Promise<DerivationEdge[]>;
}

/** What the write path looks up before it decides: receipts, entity matches, relate candidates, grants. Never writes. */
export interface IngestLookups extends Pick<RecordReads, 'record' | 'findEntity'>, RollbackLookups {
  /** The tenant's standing legal holds (a move may not take a record out of a held namespace). */
  standingHolds(tenant: string): Promise<HoldScope[]>;
  /** A steward finding the scope may see (every record and entity it names visible), for dismissFinding. */
  finding(scope: ReadScope, id: string): Promise<FindingState | undefined>;
  receipt(tenant: string, idempotencyKey: string): Promise<Receipt | undefined>;
  /** Receipts of a command and of everything it produced (`key`, `key#…`). */
  receiptsByPrefix(tenant: string, key: string): Promise<Receipt[]>;
  /**
   * Candidates for relate, for every query of a request in one round trip (the answer in query order):
   * inside the caller's scope and the statement's overlapping namespaces (its ancestors and its subtree),
   * statements about the same subject (exact, case-insensitive) and the nearest neighbours of its vector.
   * Observations are episodic and never candidates.
   */
  relateCandidatesMany(
    scope: ReadScope,
    namespace: string,
    queries: readonly RelateQuery[],
    k: number,
  ): Promise<RelatedCandidate[][]>;
  /** Everything entity resolution needs to know of every probe of a request, in one round trip, in order. */
  entityFacts(scope: ReadScope, probes: readonly EntityProbe[]): Promise<EntityFacts[]>;
  grant(tenant: string, id: string): Promise<GrantState | undefined>;
  /** Every grant any of these grantees (`iss|sub`) ever held in the tenant, revoked ones included. */
  grantsFor(tenant: string, grantees: readonly string[]): Promise<GrantState[]>;
}

/**
 * Turns on a subject across API processes (ingest/subject-gate.ts): a holder keeps each key's turn from
 * before it gathers until its write is projected, and a process that dies gives its turns back.
 */
export interface SubjectTurns {
  /** Takes the turn of every key, or null when another holder kept one of them past `waitMs`. */
  hold(keys: readonly string[], waitMs: number, holdMs: number): Promise<SubjectHold | null>;
}

/** Turns taken by `SubjectTurns.hold`, given back by `release` (at most `holdMs` after they were taken). */
export interface SubjectHold {
  release(): void;
}
