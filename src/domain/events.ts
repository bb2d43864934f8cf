import { z } from 'zod';
import {
  Instant,
  NamespacePath,
  RecordClasses,
  RecordStatuses,
  Sensitivities,
  SourceSpan,
  Statement,
  TenantId,
  TimeSources,
} from './model.ts';
import { MAX_APPROVERS } from './review.ts';
import { RelateTypes, TargetKinds } from './relations.ts';
import { FindingSeverities, FindingTypes, GrantRoles } from './stewardship-model.ts';

/**
 * The ledger's events: past-tense facts in a versioned union. The wire form is JSON on the Kafka topic
 * (key = tenant). Old schema versions are upcast on read (see `upcasters`); a version newer than this
 * build knows is never a crash: the projector parks it in the dead-letter topic with the reason.
 */

const Id = z.string().min(1).max(200);

export const ActorRef = z.object({ iss: z.string().nullable(), sub: z.string().min(1) });
export type ActorRef = z.infer<typeof ActorRef>;

/**
 * The personal part of an event's payload, encrypted under the data key of the record, entity or
 * episode it concerns (crypto-shredding, see sealing.ts): AES-256-GCM, `ciphertext` = base64(ct ‖ tag).
 */
export const SealedPayload = z.object({
  keyId: z.string().min(1),
  alg: z.literal('A256GCM'),
  iv: z.string().min(1),
  ciphertext: z.string().min(1),
});
export type SealedPayload = z.infer<typeof SealedPayload>;

export const Envelope = z.object({
  eventId: z.uuid(),
  type: z.string().min(1),
  schemaVersion: z.number().int().min(1),
  tenant: TenantId,
  namespace: NamespacePath,
  idempotencyKey: z.string().min(1).max(256),
  /** SHA-256 of the canonical command input: the same key with another input is a conflict. */
  commandHash: z.string().regex(/^[0-9a-f]{64}$/),
  principal: z.object({ iss: z.string().min(1), sub: z.string().min(1) }),
  /** RFC 8693 delegation chain, most recent actor first. */
  actors: z.array(ActorRef).max(16),
  purpose: z.string().min(1).max(200),
  changesetId: z.string().max(200).nullable(),
  /** System time, stamped once at append. The projector never reads a clock. */
  recordedAt: Instant,
});
export type Envelope = z.infer<typeof Envelope>;

/** An embedding computed at ingest, carried so that replay reproduces it without re-running the model. */
export const EmbeddingCache = z.object({
  modelId: z.string().min(1).max(200),
  vector: z.array(z.number()).min(1).max(4096),
});
export type EmbeddingCache = z.infer<typeof EmbeddingCache>;

export const RelationDecision = z.object({
  kind: z.enum(['EXTENDS', 'CONTRADICTS', 'SUPERSEDES']),
  target: Id,
  confidence: z.number().min(0).max(1),
  reason: z.string().max(500),
});
export type RelationDecision = z.infer<typeof RelationDecision>;

const RecordProposedV1 = z.object({
  recordId: Id,
  class: z.enum(RecordClasses),
  statement: Statement,
  about: z.array(Id).max(64),
  sensitivity: z.enum(Sensitivities),
  confidence: z.number().min(0).max(1),
  validFrom: Instant,
  validTo: Instant.nullable(),
  timeSource: z.enum(TimeSources),
  status: z.enum(RecordStatuses),
  rationale: z.string().max(20_000).nullable(),
  sources: z.array(SourceSpan).max(256),
  /** Domain extensions (`swe:`, `sec:` …), kept verbatim. */
  ext: z.record(z.string(), z.unknown()),
  /** The episode the statement was extracted from, when it was. */
  episodeId: Id.nullable().default(null),
  /** The pipeline's relate decision against an existing record, recorded so replay never re-decides. */
  relation: RelationDecision.nullable().default(null),
  /** Why it waits for review (CANDIDATE), machine-readable codes with a short text each. */
  reviewReasons: z.array(z.string().max(500)).max(32).default([]),
  /** Screening flags carried with the record (pii:email, injection:override_instruction …). */
  flags: z.array(z.string().max(100)).max(64).default([]),
  embedding: EmbeddingCache.nullable().default(null),
  /** Records this one was derived from (checked visible at propose): taint flows along these edges. */
  derivedFrom: z.array(Id).max(64).default([]),
});

/**
 * v2 adds reclassification and rescoping: a new class, label or namespace (each `null` = unchanged) and
 * the writer's `reason`. A namespace change is a move: the record keeps its id and history; the envelope
 * carries the namespace it was revised in (the source), the payload the one it moves to. The write side
 * checked write access on both and the review scope for a lowered label (ingest/commands/revise.ts); the
 * fold decides what a NORMATIVE change means for review. v1 events upcast to all four `null`.
 */
const RecordRevisedV2 = z.object({
  recordId: Id,
  expectedVersion: z.number().int().min(1),
  statement: Statement.nullable(),
  validFrom: Instant.nullable(),
  /** `null` leaves it unchanged; `{ open: true }` reopens it. */
  validTo: z.union([Instant, z.object({ open: z.literal(true) })]).nullable(),
  embedding: EmbeddingCache.nullable().default(null),
  class: z.enum(RecordClasses).nullable().default(null),
  sensitivity: z.enum(Sensitivities).nullable().default(null),
  namespace: NamespacePath.nullable().default(null),
  reason: z.string().min(1).max(2000).nullable().default(null),
});

export const TaintMark = z.object({
  recordId: Id,
  /** From the reverted (or retracted) source to this record (`episode:<id>` first when the link is provenance). */
  path: z.array(Id).min(2).max(64),
  reason: z.string().min(1).max(2000),
});
export type TaintMark = z.infer<typeof TaintMark>;

const RecordRetractedV1 = z.object({
  recordId: Id,
  expectedVersion: z.number().int().min(1),
  reason: z.string().min(1).max(2000),
  /** Records derived from this one, tainted with it (planned at request time, so replay agrees). */
  taints: z.array(TaintMark).max(1000).default([]),
});

/**
 * A retention rule archived the record (lifecycle/retention.ts): it leaves recall and default reads but
 * keeps its history until a rule or an operator erases it. `reason` names the rule, never the content.
 */
const RecordArchivedV1 = z.object({
  recordId: Id,
  expectedVersion: z.number().int().min(1),
  reason: z.string().min(1).max(2000),
});

const EntityCreatedV1 = z.object({
  entityId: Id,
  name: z.string().min(1).max(500),
  type: z.string().max(100).nullable(),
  aliases: z.array(z.string().min(1).max(500)).max(64),
  externalIds: z.array(z.string().min(1).max(500)).max(64),
  /** Below the merge threshold: a new entity, tentatively the same as this one (for review). */
  sameAs: z
    .object({ entityId: Id, confidence: z.number().min(0).max(1) })
    .nullable()
    .default(null),
  embedding: EmbeddingCache.nullable().default(null),
});

const RecordReinforcedV1 = z.object({
  recordId: Id,
  /** Provenance added by the repeat (set union with what the record has). */
  sources: z.array(SourceSpan).max(256),
  confidence: z.number().min(0).max(1),
  reason: z.string().max(500),
});

/**
 * v2 adds `required`: the approvers other than the proposer the write side's rules asked for when it
 * decided (recorded, so a replay under another configuration decides the same). The fold raises it to
 * the floor (NORMATIVE, injection flags) and activates the record only once that many distinct
 * reviewers approved; until then an approval is recorded as partial. v1 events upcast to `required: 0`.
 */
const ProposalApprovedV2 = z.object({
  recordId: Id,
  expectedVersion: z.number().int().min(1),
  required: z.number().int().min(0).max(MAX_APPROVERS),
});

const ProposalRejectedV1 = z.object({
  recordId: Id,
  expectedVersion: z.number().int().min(1),
  reason: z.string().min(1).max(2000),
});

const EpisodeTurnV1 = z.object({
  index: z.number().int().min(0),
  role: z.string().min(1).max(50),
  speaker: z.string().max(200).nullable(),
  start: z.number().int().min(0),
  end: z.number().int().min(0),
  label: z.string().max(200).nullable(),
});

const EpisodeStoredV1 = z.object({
  episodeId: Id,
  source: z.string().min(1).max(200),
  occurredAt: Instant,
  /** The screened text: secrets are already replaced by SecretRefs and never reach the ledger. */
  text: z.string().max(2_000_000),
  turns: z.array(EpisodeTurnV1).max(10_000),
  chunks: z
    .array(
      z.object({
        index: z.number().int().min(0),
        start: z.number().int().min(0),
        end: z.number().int().min(0),
      }),
    )
    .max(10_000),
  sensitivity: z.enum(Sensitivities),
  secretRefs: z.array(z.object({ ref: z.string(), kind: z.string() })).max(1000),
  flags: z.array(z.string().max(100)).max(256),
});

/**
 * A namespace grant: the grantee (keyed on iss + sub, a person or an agent) may read the subtree at the
 * event's namespace up to `maxSensitivity`, for the listed purposes (null = any purpose). Grants narrow a
 * tenant member's default access; an agent's grants intersect with its principal's.
 */
const AccessGrantedV1 = z.object({
  grantId: Id,
  grantee: z.object({ iss: z.string().min(1).max(500), sub: z.string().min(1).max(500) }),
  maxSensitivity: z.enum(Sensitivities),
  purposes: z.array(z.string().min(1).max(200)).min(1).max(32).nullable(),
  /**
   * Stewardship as data (domain/stewardship.ts): an OWNER or STEWARD grant also names who owns or stewards
   * the subtree. Every role reads like a READER; grants before roles existed are READER.
   */
  role: z.enum(GrantRoles).default('READER'),
});

const AccessRevokedV1 = z.object({
  grantId: Id,
  reason: z.string().min(1).max(2000),
});

/**
 * A tombstone: the data key of the record, entity or episode `id` was destroyed (or is being destroyed)
 * for `reason`. It holds only ids and the operator's reason, never the erased content; the fold replaces
 * the target's personal fields with a fixed marker, so live state and a replay agree.
 */
export const ErasureTargets = ['RECORD', 'ENTITY', 'EPISODE'] as const;
export type ErasureTarget = (typeof ErasureTargets)[number];
const ErasedV1 = z.object({
  target: z.enum(ErasureTargets),
  id: Id,
  erasureId: Id,
  reason: z.string().min(1).max(2000),
});

/**
 * A legal hold on a namespace subtree (`target` NAMESPACE: the event's namespace) or on one record: while
 * it stands, nothing under it may be erased. Placing and releasing are admin acts, kept on the ledger.
 */
const HoldPlacedV1 = z.object({
  holdId: Id,
  target: z.enum(['NAMESPACE', 'RECORD']),
  /** The held record's id (RECORD); null for a namespace hold. */
  recordId: Id.nullable(),
  reason: z.string().min(1).max(2000),
});

const HoldReleasedV1 = z.object({
  holdId: Id,
  reason: z.string().min(1).max(2000),
});

/** A caller's verdict on an item it was given by a recall: ranking reads the record's utility. */
const FeedbackRecordedV1 = z.object({
  recordId: Id,
  recallId: Id,
  verdict: z.enum(['USED', 'IGNORED', 'WRONG']),
});

/**
 * An explicit typed relation (the `relate` mutation, relations.ts) from the record `recordId` to a record
 * or an entity, with its own confidence and validity. Relating the same (type, target) again replaces the
 * edge's confidence, validity and reason (ending a relation = relating it again with a validTo).
 */
const RecordRelatedV1 = z.object({
  recordId: Id,
  target: Id,
  targetKind: z.enum(TargetKinds),
  type: z.enum(RelateTypes),
  confidence: z.number().min(0).max(1),
  validFrom: Instant,
  validTo: Instant.nullable(),
  reason: z.string().min(1).max(2000),
});

/**
 * A steward check's review item (lifecycle/steward.ts): what it found, about which records or entities
 * (ids only, never content), in the event's namespace. `findingId` is derived from the type and the ids,
 * so the same situation is the same finding; raising one that is open is a no-op.
 */
const FindingRaisedV1 = z.object({
  findingId: Id,
  findingType: z.enum(FindingTypes),
  severity: z.enum(FindingSeverities),
  recordIds: z.array(Id).max(64),
  entityIds: z.array(Id).max(64),
  reason: z.string().min(1).max(2000),
});

/**
 * The finding no longer holds (the steward's next run), or a reviewer dismissed it (`dismissed`: it holds,
 * and is accepted; the steward does not raise it again). Defaulted, so older events read as not dismissed.
 */
const FindingResolvedV1 = z.object({
  findingId: Id,
  reason: z.string().min(1).max(2000),
  dismissed: z.boolean().default(false),
});

/**
 * A rollback (see rollback-plan.ts): the write side computed, from the graph at request time, every
 * compensating change and every taint, and records them here as data. The fold only applies them (each
 * guarded by the version the plan read), so a replay reproduces exactly what the live projector did.
 */
export const RollbackTarget = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('EVENT'), eventId: Id }),
  z.object({ kind: z.literal('CHANGESET'), changesetId: Id }),
  z.object({ kind: z.literal('NAMESPACE'), namespace: NamespacePath, to: Instant }),
]);
export type RollbackTarget = z.infer<typeof RollbackTarget>;

export const ApprovalRef = z.object({
  by: z.string().min(1).max(1000),
  via: z.array(z.string().max(1000)).max(16),
  at: Instant,
  eventId: Id,
});

export const Compensation = z.object({
  recordId: Id,
  expectedVersion: z.number().int().min(1),
  /** REVERT: created by a reverted event; RESTORE: back to the revision before; REVIEW: changed since by someone else. */
  action: z.enum(['REVERT', 'RESTORE', 'REVIEW']),
  /** The state to open as a new revision (null for REVIEW). */
  target: z
    .object({
      statement: Statement,
      status: z.enum(RecordStatuses),
      validFrom: Instant,
      validTo: Instant.nullable(),
      approvals: z.array(ApprovalRef).max(MAX_APPROVERS + 8),
      approvedAt: Instant.nullable(),
      /** The class, label and namespace to restore when a reverted revise changed them (a move back). */
      classification: z
        .object({
          class: z.enum(RecordClasses),
          sensitivity: z.enum(Sensitivities),
          namespace: NamespacePath,
        })
        .nullable()
        .default(null),
      /**
       * The restored words' vector, computed by the rollback command as revise computes a new text's
       * (null when the words stay, or the embedder gave none): the record is found by the meaning it has.
       */
      embedding: EmbeddingCache.nullable().default(null),
    })
    .nullable(),
  reason: z.string().min(1).max(2000),
});
export type Compensation = z.infer<typeof Compensation>;

const RolledBackV1 = z.object({
  rollbackId: Id,
  target: RollbackTarget,
  reason: z.string().min(1).max(2000),
  compensations: z.array(Compensation).max(10_000),
  taints: z.array(TaintMark).max(10_000),
});

const variant = <T extends string, P extends z.ZodType, V extends number = 1>(
  type: T,
  payload: P,
  version: V = 1 as V,
) => Envelope.extend({ type: z.literal(type), schemaVersion: z.literal(version), payload });

export const LedgerEvent = z.discriminatedUnion('type', [
  variant('RecordProposed', RecordProposedV1),
  variant('RecordRevised', RecordRevisedV2, 2),
  variant('RecordRetracted', RecordRetractedV1),
  variant('EntityCreated', EntityCreatedV1),
  variant('RecordReinforced', RecordReinforcedV1),
  variant('ProposalApproved', ProposalApprovedV2, 2),
  variant('ProposalRejected', ProposalRejectedV1),
  variant('EpisodeStored', EpisodeStoredV1),
  variant('AccessGranted', AccessGrantedV1),
  variant('AccessRevoked', AccessRevokedV1),
  variant('FeedbackRecorded', FeedbackRecordedV1),
  variant('Erased', ErasedV1),
  variant('HoldPlaced', HoldPlacedV1),
  variant('HoldReleased', HoldReleasedV1),
  variant('RecordArchived', RecordArchivedV1),
  variant('RecordRelated', RecordRelatedV1),
  variant('FindingRaised', FindingRaisedV1),
  variant('FindingResolved', FindingResolvedV1),
  variant('RolledBack', RolledBackV1),
]);
export type LedgerEvent = z.infer<typeof LedgerEvent>;
export type EventType = LedgerEvent['type'];
export type EventOf<T extends EventType> = Extract<LedgerEvent, { type: T }>;
export type PayloadOf<T extends EventType> = EventOf<T>['payload'];
export const EventTypes = LedgerEvent.options.map((o) => o.shape.type.value) as EventType[];
