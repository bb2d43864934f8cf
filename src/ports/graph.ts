import type {
  Erasure,
  EntityState,
  EpisodeState,
  GrantState,
  Receipt,
  RecordState,
  TaintState,
  HoldState,
  FindingState,
} from '../domain/fold.ts';
import type { RecordClass, RecordStatus, Sensitivity } from '../domain/model.ts';
import type { Approval } from '../domain/review.ts';

export type { ReadScope } from '../domain/policy.ts';
import type { ReadScope } from '../domain/policy.ts';
import type { IngestLookups } from './ingest-lookups.ts';

export interface AsOf {
  /** World time: what was true at this instant. Absent = no world-time filter on single reads, now on lists. */
  readonly validAt?: string | undefined;
  /** System time: what Muninn believed at this instant. Absent = now (the current revision). */
  readonly knownAt?: string | undefined;
}

export interface RecordView {
  readonly tenant: string;
  readonly id: string;
  readonly namespace: string;
  readonly class: RecordClass;
  readonly status: RecordStatus;
  readonly version: number;
  readonly subject: string;
  readonly predicate: string;
  readonly object: string;
  readonly text: string;
  readonly sensitivity: Sensitivity;
  readonly confidence: number;
  readonly validFrom: string;
  readonly validTo: string | null;
  readonly timeSource: string;
  readonly recordedAt: string;
  readonly retiredAt: string | null;
  readonly createdAt: string;
  readonly changesetId: string | null;
  readonly rationale: string | null;
  readonly about: readonly string[];
  readonly sourcesJson: string;
  readonly extJson: string;
  readonly proposedBy: string;
  /** The proposer's agents (`iss|sub`), parties to the proposal for separation of duties. */
  readonly proposedVia: readonly string[];
  /** Recorded review approvals (partial ones while it waits). */
  readonly approvals: readonly Approval[];
  /** When a review approval made it ACTIVE; null when no review approved its current text. */
  readonly approvedAt: string | null;
  readonly reviewReasons: readonly string[];
  readonly flags: readonly string[];
  readonly reinforcements: number;
  /** From recall feedback, in [-1, 1]; ranking reads it. */
  readonly utility: number;
  /** Set when a record it derives from was reverted: the path from that record to this one. */
  readonly taint?: TaintState | null;
}

export interface RevisionView {
  readonly version: number;
  readonly subject: string;
  readonly predicate: string;
  readonly object: string;
  readonly text: string;
  readonly status: RecordStatus;
  readonly validFrom: string;
  readonly validTo: string | null;
  readonly recordedAt: string;
  readonly retiredAt: string | null;
  readonly changesetId: string | null;
  readonly reason: string | null;
}

export interface RecordQuery {
  readonly namespace: string;
  readonly classes?: readonly RecordClass[] | undefined;
  readonly statuses?: readonly RecordStatus[] | undefined;
  readonly aboutEntityIds?: readonly string[] | undefined;
  readonly predicate?: string | undefined;
  readonly textContains?: string | undefined;
  /** Only what one session, job or import produced. */
  readonly changesetId?: string | undefined;
}

export interface Page<T> {
  readonly items: readonly T[];
  readonly endCursor: string | null;
  readonly hasNextPage: boolean;
}

export interface Checkpoint {
  readonly topic: string;
  readonly partition: number;
  /** Offset of the last applied message; -1 when none. */
  readonly offset: string;
}

/** Keys the projector asks for before folding a batch. */
export interface StateKeys {
  readonly records: ReadonlyArray<{ tenant: string; id: string }>;
  readonly entities: ReadonlyArray<{ tenant: string; id: string }>;
  readonly receipts: ReadonlyArray<{ tenant: string; idempotencyKey: string }>;
  readonly episodes: ReadonlyArray<{ tenant: string; id: string }>;
  readonly grants?: ReadonlyArray<{ tenant: string; id: string }>;
  readonly holds?: ReadonlyArray<{ tenant: string; id: string }>;
  readonly findings?: ReadonlyArray<{ tenant: string; id: string }>;
}

export interface LoadedState {
  readonly records: readonly RecordState[];
  readonly entities: readonly EntityState[];
  readonly receipts: readonly Receipt[];
  readonly episodes: readonly EpisodeState[];
  readonly grants: readonly GrantState[];
  readonly holds?: readonly HoldState[];
  readonly findings?: readonly FindingState[];
}

export interface ProjectionWrite {
  readonly records: readonly RecordState[];
  /**
   * For a record of `records` that was loaded, the versions of its revisions the batch left as the graph
   * holds them: they are not written again (a reinforcement of a record with ten revisions rewrote all
   * ten). A record not in the map has every revision written.
   */
  readonly unchangedRevisions?: ReadonlyMap<RecordState, ReadonlySet<number>>;
  readonly entities: readonly EntityState[];
  readonly receipts: readonly Receipt[];
  readonly episodes: readonly EpisodeState[];
  readonly grants: readonly GrantState[];
  readonly holds?: readonly HoldState[];
  readonly findings?: readonly FindingState[];
  /** Items erased by this batch: their receipts of earlier batches lose their reasons first. */
  readonly erasures?: readonly Erasure[];
}

/**
 * One projection transaction: lock the checkpoint, read state, write effects and the new checkpoint. Each method sends its statements when it is called, before its promise
 * settles, and the database runs them in the order sent: a caller may send several and await them
 * together (one round trip instead of several), as `applyBatch` does.
 */
export interface ProjectionTx {
  /**
   * Locks the partition's checkpoint row for this transaction and returns its offset (-1 if none).
   * Refused (UNAVAILABLE, retryable) while a rebuild fences the topic, unless `fence` is that rebuild's.
   */
  lockCheckpoint(topic: string, partition: number, fence?: string): Promise<bigint>;
  load(keys: StateKeys): Promise<LoadedState>;
  write(w: ProjectionWrite): Promise<void>;
  /** Moves the checkpoint forward; never backwards. */
  setCheckpoint(topic: string, partition: number, offset: bigint): Promise<void>;
}

export interface Proposal {
  readonly record: RecordView;
  readonly reviewReasons: readonly string[];
  readonly flags: readonly string[];
}

/**
 * One recall arm's question: every arm filters by scope, status, class and validity inside its query.
 * One object per recall: its arms may share what an adapter reads once for it (scope-vectors.ts reads
 * the request's namespace stamps once per query object), so a new recall asks with a new object.
 */
export interface ArmQuery {
  readonly scope: ReadScope;
  /** The request's namespace: its subtree and its ancestors are searched. */
  readonly namespace: string;
  readonly classes: readonly RecordClass[] | null;
  /** World time the records must be valid at. */
  readonly validAt: string;
  /** System time: judge each record by the revision current then (null = now). */
  readonly knownAt: string | null;
  readonly k: number;
}

/** Where the projection stands on each partition of a topic (waiters and status read only this). */
export interface Checkpoints {
  /** As the graph shows them now: a checkpoint may show before its transaction is applied whole. */
  checkpoints(topic: string): Promise<Checkpoint[]>;
  /** Only checkpoints whose transactions are applied whole (each read under its lock): read-your-writes. */
  checkpointsApplied(topic: string): Promise<Checkpoint[]>;
}

/** The only writer of the graph: the projector (and a rebuild) fold events in one transaction per batch. */
export interface ProjectionStore extends Checkpoints {
  /** Run `fn` in one write transaction (retried on transient errors, so `fn` must be repeatable). */
  projection<T>(fn: (tx: ProjectionTx) => Promise<T>): Promise<T>;
}

/** One typed relation of a record, as the caller may see it (RecordReads.relations). */
export interface RelationView {
  readonly type: string;
  readonly direction: 'OUT' | 'IN';
  readonly otherId: string;
  readonly targetKind: 'RECORD' | 'ENTITY';
  readonly confidence: number;
  readonly reason: string | null;
  /** null on the pipeline's relate decisions: they hold always. */
  readonly validFrom: string | null;
  readonly validTo: string | null;
  readonly recordedAt: string | null;
}

/** Scoped reads of records, their history and relations, entities, the review queue and grants (the records service, analytics). */
export interface RecordReads {
  record(scope: ReadScope, id: string, asOf?: AsOf): Promise<RecordView | undefined>;
  records(
    scope: ReadScope,
    q: RecordQuery,
    asOf: AsOf,
    first: number,
    after: string | null,
  ): Promise<Page<RecordView>>;
  history(scope: ReadScope, id: string): Promise<RevisionView[]>;
  /** How many records `records` would list (every page), under the same scope and filter. */
  recordCount(scope: ReadScope, q: RecordQuery, asOf: AsOf): Promise<number>;
  /**
   * The entities among `ids` the caller may see: it reads the whole tenant at every label, or some
   * record it may read is about the entity. The same predicate bounds findEntity, entityFacts
   * and entitiesNamed, so nothing resolves, links or anchors to an entity the caller cannot see.
   */
  entities(scope: ReadScope, ids: readonly string[]): Promise<EntityState[]>;
  /** The first visible entity with this id, external id, or name/alias (of a compatible type). */
  findEntity(
    scope: ReadScope,
    ref: {
      id?: string | undefined;
      alias?: string | undefined;
      externalId?: string | undefined;
      type?: string | undefined;
    },
  ): Promise<EntityState | undefined>;
  /**
   * A record's typed relations to records (both directions) and entities (outgoing) inside the scope,
   * each with its confidence and validity (the caller reads the other end through the same check).
   */
  relations(scope: ReadScope, id: string): Promise<RelationView[]>;
  /** Proposals waiting for review (CANDIDATE) in a namespace subtree, oldest first. */
  reviewQueue(
    scope: ReadScope,
    namespace: string,
    first: number,
    after: string | null,
  ): Promise<Page<Proposal>>;
  /** Records by id inside the scope, as of `knownAt` (the revision current then; null = now), each with the visible ids it CONTRADICTS. */
  recordsByIds(
    scope: ReadScope,
    ids: readonly string[],
    knownAt?: string | null,
  ): Promise<Array<RecordView & { contradicts: string[] }>>;
  /** Every grant in the tenant (revoked ones too), newest first. */
  grants(tenant: string): Promise<GrantState[]>;
}

/** Recall's candidate arms: ranked record ids, best first, every one filtered by the caller's scope before it is ranked. */
export interface RecallArms extends Pick<RecordReads, 'findEntity' | 'recordsByIds'> {
  /** Fulltext matches the caller may see, best Lucene score first, at most `fetch` (ranked by the caller). */
  lexicalArm(
    q: ArmQuery,
    text: string,
    fetch: number,
  ): Promise<Array<{ id: string; subject: string; text: string; context: string | null; validFrom: string }>>;
  /**
   * Records nearest to `vector`, among those embedded by the same model (`modelId`, the records'
   * embeddingModel): vectors of different models are not comparable, so after a model switch the older
   * records are not found by this arm rather than ranked by a meaningless cosine.
   */
  vectorArm(q: ArmQuery, vector: readonly number[], modelId: string): Promise<string[]>;
  /** Records about the anchor entities or their SAME_AS neighbours; returns [recordId, anchorId] pairs. */
  graphArm(q: ArmQuery, anchorIds: readonly string[]): Promise<Array<[string, string]>>;
  /**
   * Records one or two structural relations (relations.ts STRUCTURAL_TYPES, either direction) away from
   * the seed records, through records the caller may read only, over edges valid at the query's time;
   * returns [recordId, seedId] pairs, nearest first.
   */
  relatedArm(q: ArmQuery, seedIds: readonly string[]): Promise<Array<[string, string]>>;
  /** Visible entities whose name or an alias equals one of `phrases` (lower case), at most `limit`: query anchors. */
  entitiesNamed(scope: ReadScope, phrases: readonly string[], limit: number): Promise<string[]>;
  /** Standing context inherited from the ancestor namespaces (constraints, norms, procedures, preferences). */
  scopeArm(q: ArmQuery): Promise<string[]>;
}

export interface EmbeddingModelCount {
  readonly modelId: string;
  readonly records: number;
  readonly entities: number;
}

/** Operating the database: migrations, health, the test-database mark, the state hash, wipe and close. Only the composition root, the CLI and a rebuild hold it. */
export interface GraphAdmin {
  migrate(): Promise<{ applied: string[] }>;
  migrationsApplied(): Promise<boolean>;
  ping(): Promise<void>;
  /** Whether an operator marked this database as a test database (golden-set seeding requires it). */
  isTestDatabase(): Promise<boolean>;
  markTestDatabase(marked: boolean): Promise<void>;
  /**
   * How many records and entities each embedding model embedded (of one tenant, or of all): vectors of
   * another model than the running one are invisible to vector search until they are embedded again.
   */
  embeddingModels(tenant?: string): Promise<EmbeddingModelCount[]>;
  /** Canonical hash of the domain state (records, revisions, entities, receipts, their relations). */
  stateHash(): Promise<{ hash: string; nodes: number; relationships: number }>;
  /** The sorted canonical lines the state hash is taken over (to show where two states differ). */
  stateLines(): Promise<{ lines: string[]; nodes: number; relationships: number }>;
  /** Delete all domain state and checkpoints (rebuild into an empty database). */
  wipe(): Promise<void>;
  /**
   * Fences the topic's projection for a rebuild and returns the fence's id: once it returns, no projection
   * transaction of the topic's `partitions` is running and every later one is refused until the fence is
   * lifted, except the holder's. A newer fence replaces an older one (a rebuild run again after one died).
   */
  fenceProjection(topic: string, partitions: number): Promise<string>;
  /** Lifts the fence if it is still `fence` (a newer rebuild's stays). */
  liftProjectionFence(topic: string, fence: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Every role at once: only the Neo4j adapter implements it and only the composition root (main.ts) holds
 * it. A use case receives the roles it uses, so "reads never write" is a property of the types.
 */
export interface GraphStore extends ProjectionStore, RecordReads, RecallArms, IngestLookups, GraphAdmin {}
