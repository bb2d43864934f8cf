import { readableWherever } from './access.ts';
import type { EmbeddingCache, EventOf, LedgerEvent } from './events.ts';
import type {
  Outcome,
  RecordClass,
  RecordStatus,
  Sensitivity,
  SourceSpan,
  Statement,
  TimeSource,
} from './model.ts';
import { approversRequired, decideApproval, describeApproval, partiesOf, type Approval } from './review.ts';
import { erased } from './erasure-fold.ts';
import { receiptOf } from './receipts.ts';
import { holdPlaced, holdReleased, type HoldState } from './hold-fold.ts';
import { reclassify, type Classification } from './reclassify.ts';
import { related } from './relate-fold.ts';
import type { RelateType, TargetKind } from './relations.ts';
import { findingRaised, findingResolved, type FindingState } from './finding-fold.ts';
import type { GrantRole } from './stewardship-model.ts';
import { flaggedForReview, keptAfterReview, rolledBack, taintAll, taintedAtBirth } from './rollback-fold.ts';
import { appendRevision, currentRevision, sameStatement } from './revisions.ts';

/**
 * The projection's fold: `evolve(view, event)` is pure and deterministic. It reads only the event and
 * the projected state (through `view`), never a clock; system time comes from `event.recordedAt`.
 * Nothing is edited in place: a change closes the current revision (`retiredAt`) and opens a new one.
 */

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

/**
 * A record's utility in [-1, 1] from its recall feedback: used pulls up, wrong pulls down twice as hard,
 * ignored a little; two pseudo-observations keep one vote from swinging it to an extreme.
 */
export function utilityOf(f: FeedbackCounts): number {
  const n = f.used + f.ignored + f.wrong;
  if (n === 0) return 0;
  const u = (f.used - 2 * f.wrong - 0.25 * f.ignored) / (n + 2);
  return Math.max(-1, Math.min(1, Math.round(u * 1000) / 1000));
}

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

export { currentRevision };

export function evolve(view: ProjectionView, e: LedgerEvent): Effect {
  const prior = view.receipt(e.tenant, e.idempotencyKey);
  if (prior) {
    // The key was used before. Same input: a retried command, nothing to do. Another input: the
    // writer is told CONFLICT by reading this receipt; the original receipt stays as it is.
    return {};
  }
  switch (e.type) {
    case 'RecordProposed':
      return proposed(view, e);
    case 'RecordRevised':
      return revised(view, e);
    case 'RecordRetracted':
      return retracted(view, e);
    case 'EntityCreated':
      return entityCreated(view, e);
    case 'RecordReinforced':
      return reinforced(view, e);
    case 'ProposalApproved':
      return approved(view, e);
    case 'ProposalRejected':
      return rejected(view, e);
    case 'EpisodeStored':
      return episodeStored(view, e);
    case 'AccessGranted':
      return accessGranted(view, e);
    case 'AccessRevoked':
      return accessRevoked(view, e);
    case 'FeedbackRecorded':
      return feedbackRecorded(view, e);
    case 'Erased':
      return erased(view, e);
    case 'HoldPlaced':
      return holdPlaced(view, e);
    case 'HoldReleased':
      return holdReleased(view, e);
    case 'RecordArchived':
      return archived(view, e);
    case 'RecordRelated':
      return related(view, e);
    case 'FindingRaised':
      return findingRaised(view, e);
    case 'FindingResolved':
      return findingResolved(view, e);
    case 'RolledBack':
      return rolledBack(view, e);
  }
}

function proposed(view: ProjectionView, e: EventOf<'RecordProposed'>): Effect {
  const p = e.payload;
  if (view.record(e.tenant, p.recordId)) {
    return { receipt: receiptOf(e, 'REJECTED', p.recordId, null, 'record id already exists') };
  }
  const target = p.relation ? view.record(e.tenant, p.relation.target) : undefined;
  const relations: RelationState[] =
    p.relation && target
      ? [
          {
            type: p.relation.kind,
            target: p.relation.target,
            confidence: p.relation.confidence,
            reason: p.relation.reason,
            eventId: e.eventId,
            recordedAt: e.recordedAt,
          },
        ]
      : [];
  const record: RecordState = taintedAtBirth(view, e, {
    tenant: e.tenant,
    id: p.recordId,
    namespace: e.namespace,
    class: p.class,
    sensitivity: p.sensitivity,
    confidence: p.confidence,
    timeSource: p.timeSource,
    rationale: p.rationale,
    // Like a relation to a record not yet known, an entity not yet known is not what the record is about:
    // a producer's retry can land a proposal before its request's own EntityCreated. Keeping the id would
    // make the graph depend on where the projector's batches end (the ABOUT edge exists only if the
    // entity was written first; test/int/projection-batches.test.ts).
    about: p.about.filter((id) => view.entity(e.tenant, id) !== undefined),
    sources: p.sources,
    ext: p.ext,
    createdAt: e.recordedAt,
    proposedBy: `${e.principal.iss}|${e.principal.sub}`,
    proposedVia: partiesOf(e.principal, e.actors).slice(1),
    approvals: [],
    approvedAt: null,
    revisions: [
      {
        version: 1,
        statement: p.statement,
        status: p.status,
        validFrom: p.validFrom,
        validTo: p.validTo,
        recordedAt: e.recordedAt,
        retiredAt: null,
        changesetId: e.changesetId,
        eventId: e.eventId,
        reason: null,
      },
    ],
    relations,
    reviewReasons: p.reviewReasons,
    flags: p.flags,
    embedding: p.embedding,
    episodeId: p.episodeId,
    reinforcements: 0,
    feedback: NO_FEEDBACK,
    votes: {},
    derivedFrom: p.derivedFrom,
  });
  if (p.status === 'CANDIDATE')
    return { record, receipt: receiptOf(e, 'QUEUED', p.recordId, 1, p.reviewReasons.join('; ') || null) };
  const act = activate(record, target, e);
  return {
    record: act.record,
    others: act.others,
    receipt: receiptOf(e, act.outcome, p.recordId, currentRevision(act.record).version, act.reason),
  };
}

/**
 * A record becomes active (at proposal or approval): its relate decision takes effect. SUPERSEDES closes
 * the target's validity and marks it SUPERSEDED; CONTRADICTS marks both CONTESTED; EXTENDS only links.
 *
 * What a mark reveals: a side is marked (superseded, contested) only when everyone who may read it may
 * read the other side too (`readableWherever`, from the two records' namespaces and labels alone, so a
 * replay decides the same). Otherwise the relation is kept — listed to those who may read both, whose
 * recall still sees the conflict — but that side's status says nothing about a record its readers
 * cannot see. A supersede the target's readers may not learn of marks nothing.
 */
function activate(
  record: RecordState,
  target: RecordState | undefined,
  e: LedgerEvent,
): { record: RecordState; others: RecordState[]; outcome: Outcome; reason: string | null } {
  const rel = proposedRelation(record);
  const live = (r: RecordState) => ['ACTIVE', 'CONTESTED'].includes(currentRevision(r).status);
  if (!rel || !target || !live(target)) return { record, others: [], outcome: 'ADMITTED', reason: null };
  const t = currentRevision(target);
  const targetMayLearn = readableWherever(record, target);
  if (rel.type === 'SUPERSEDES' && targetMayLearn) {
    const from = currentRevision(record).validFrom;
    const closeAt = from > t.validFrom ? from : t.validFrom;
    const validTo = t.validTo !== null && t.validTo < closeAt ? t.validTo : closeAt;
    const closed = appendRevision(target, e.recordedAt, {
      ...t,
      version: t.version + 1,
      status: 'SUPERSEDED',
      validTo,
      eventId: e.eventId,
      changesetId: e.changesetId,
      reason: `superseded by ${record.id}`,
    });
    return { record, others: [closed], outcome: 'SUPERSEDED', reason: rel.reason };
  }
  if (rel.type === 'CONTRADICTS') {
    const recordMayLearn = readableWherever(target, record);
    if (!recordMayLearn && !targetMayLearn)
      return { record, others: [], outcome: 'ADMITTED', reason: rel.reason };
    const mine = recordMayLearn ? appendInPlaceStatus(record, 'CONTESTED') : record;
    const others =
      t.status === 'CONTESTED' || !targetMayLearn
        ? []
        : [
            appendRevision(target, e.recordedAt, {
              ...t,
              version: t.version + 1,
              status: 'CONTESTED',
              eventId: e.eventId,
              changesetId: e.changesetId,
              reason: `contradicted by ${record.id}`,
            }),
          ];
    return { record: mine, others, outcome: 'CONTESTED', reason: rel.reason };
  }
  return { record, others: [], outcome: 'ADMITTED', reason: rel.reason };
}

/** Sets the status of the newest revision when it is being created by this very event (no history to keep). */
function appendInPlaceStatus(record: RecordState, status: RecordStatus): RecordState {
  const revs = record.revisions.slice(0, -1);
  return { ...record, revisions: [...revs, { ...currentRevision(record), status }] };
}

/** Guards every change to an existing record: it must exist in this tenant and match expectedVersion. */
function guard(
  view: ProjectionView,
  e: LedgerEvent & { payload: { recordId: string; expectedVersion: number } },
): { record: RecordState; current: RevisionState } | { rejected: Effect } {
  const { recordId, expectedVersion } = e.payload;
  const record = view.record(e.tenant, recordId);
  if (!record) return { rejected: { receipt: receiptOf(e, 'REJECTED', recordId, null, 'record not found') } };
  const current = currentRevision(record);
  if (current.version !== expectedVersion) {
    return {
      rejected: {
        receipt: receiptOf(
          e,
          'CONFLICT',
          recordId,
          current.version,
          `expected version ${expectedVersion}, current version is ${current.version}`,
        ),
      },
    };
  }
  if (current.status === 'RETRACTED' || current.status === 'ERASED' || current.status === 'REVERTED') {
    return {
      rejected: {
        receipt: receiptOf(e, 'REJECTED', recordId, current.version, `record is ${current.status}`),
      },
    };
  }
  return { record, current };
}

function revised(view: ProjectionView, e: EventOf<'RecordRevised'>): Effect {
  const g = guard(view, e);
  if ('rejected' in g) return g.rejected;
  const p = e.payload;
  const validTo = p.validTo === null ? g.current.validTo : typeof p.validTo === 'string' ? p.validTo : null;
  const validFrom = p.validFrom ?? g.current.validFrom;
  if (validTo !== null && validTo <= validFrom) {
    return {
      receipt: receiptOf(e, 'REJECTED', p.recordId, g.current.version, 'validTo must be after validFrom'),
    };
  }
  const version = g.current.version + 1;
  const restated = p.statement !== null && !sameStatement(p.statement, g.current.statement);
  // An approval covers the text the reviewers read: new text is no longer approved (nor partly approved).
  // New text carries the vector the revise computed for it (null where the embedder gave none): relate and
  // the vector arm compare what the record says now, never the words it replaced.
  const base: RecordState = restated
    ? { ...g.record, approvals: [], approvedAt: null, embedding: p.embedding }
    : g.record;
  const rc = reclassify({
    current: { ...g.record, status: g.current.status },
    change: p,
    principal: e.principal,
    actors: e.actors,
  });
  const moved: RecordState = { ...base, ...rc.next };
  const reclassed: RecordState = rc.review
    ? {
        ...moved,
        approvals: [],
        approvedAt: null,
        proposedVia: rc.review.proposedVia,
        reviewReasons: [rc.review.reason],
      }
    : moved;
  const record = appendRevision(reclassed, e.recordedAt, {
    version,
    statement: p.statement ?? g.current.statement,
    status: rc.review?.status ?? g.current.status,
    validFrom,
    validTo,
    changesetId: e.changesetId,
    eventId: e.eventId,
    reason: rc.summary ?? p.reason,
  });
  const outcome = rc.review ? 'QUEUED' : 'REVISED';
  return { record, receipt: receiptOf(e, outcome, p.recordId, version, rc.review?.reason ?? rc.summary) };
}

function retracted(view: ProjectionView, e: EventOf<'RecordRetracted'>): Effect {
  const g = guard(view, e);
  if ('rejected' in g) return g.rejected;
  const version = g.current.version + 1;
  const record = appendRevision(g.record, e.recordedAt, {
    ...g.current,
    version,
    status: 'RETRACTED',
    changesetId: e.changesetId,
    eventId: e.eventId,
    reason: e.payload.reason,
  });
  // Records derived from it are tainted with it (the write side walked the derivations; see retract.ts).
  const others = taintAll((id) => view.record(e.tenant, id), e.payload.taints, e.eventId, e.recordedAt);
  return {
    record,
    ...(others.length > 0 ? { others } : {}),
    receipt: receiptOf(e, 'RETRACTED', e.payload.recordId, version, e.payload.reason),
  };
}

/** Retention archives live knowledge only: a candidate waits for review, a retracted record stays so. */
const ARCHIVABLE: readonly RecordStatus[] = ['ACTIVE', 'CONTESTED', 'SUPERSEDED'];

function archived(view: ProjectionView, e: EventOf<'RecordArchived'>): Effect {
  const g = guard(view, e);
  if ('rejected' in g) return g.rejected;
  const { recordId, reason } = e.payload;
  if (!ARCHIVABLE.includes(g.current.status))
    return {
      receipt: receiptOf(e, 'REJECTED', recordId, g.current.version, `record is ${g.current.status}`),
    };
  const version = g.current.version + 1;
  const record = appendRevision(g.record, e.recordedAt, {
    ...g.current,
    version,
    status: 'ARCHIVED',
    changesetId: e.changesetId,
    eventId: e.eventId,
    reason,
  });
  return { record, receipt: receiptOf(e, 'ARCHIVED', recordId, version, reason) };
}

function entityCreated(view: ProjectionView, e: EventOf<'EntityCreated'>): Effect {
  const p = e.payload;
  const existing = view.entity(e.tenant, p.entityId);
  // Entity ids are UUIDv5 of (tenant, type, name): two writers creating the same entity converge.
  const entity: EntityState = existing
    ? {
        ...existing,
        aliases: union(existing.aliases, p.aliases),
        externalIds: union(existing.externalIds, p.externalIds),
        embedding: existing.embedding ?? p.embedding,
      }
    : {
        tenant: e.tenant,
        id: p.entityId,
        name: p.name,
        type: p.type,
        aliases: union([], p.aliases),
        externalIds: union([], p.externalIds),
        sameAs:
          p.sameAs && p.sameAs.entityId !== p.entityId && view.entity(e.tenant, p.sameAs.entityId)
            ? p.sameAs
            : null,
        embedding: p.embedding,
      };
  return { entity, receipt: receiptOf(e, 'ADMITTED', null, null, null) };
}

const union = (a: readonly string[], b: readonly string[]): string[] => [...new Set([...a, ...b])].sort();

function reinforced(view: ProjectionView, e: EventOf<'RecordReinforced'>): Effect {
  const p = e.payload;
  const r = view.record(e.tenant, p.recordId);
  if (!r) return { receipt: receiptOf(e, 'REJECTED', p.recordId, null, 'record not found') };
  const cur = currentRevision(r);
  if (['RETRACTED', 'REJECTED', 'ERASED', 'SUPERSEDED', 'REVERTED'].includes(cur.status)) {
    return { receipt: receiptOf(e, 'REJECTED', p.recordId, cur.version, `record is ${cur.status}`) };
  }
  // Provenance is a set union; confidence only goes up. The claim itself is unchanged: no new revision.
  const key = (x: SourceSpan) => `${x.episodeId}|${x.start}|${x.end}|${x.label ?? ''}`;
  const seen = new Set(r.sources.map(key));
  const added = p.sources.filter((x) => !seen.has(key(x)));
  const record: RecordState = {
    ...r,
    sources: [...r.sources, ...added],
    confidence: Math.max(r.confidence, p.confidence),
    reinforcements: r.reinforcements + 1,
  };
  return { record, receipt: receiptOf(e, 'REINFORCED', p.recordId, cur.version, p.reason) };
}

function candidateGuard(
  view: ProjectionView,
  e: EventOf<'ProposalApproved'> | EventOf<'ProposalRejected'>,
): { record: RecordState; current: RevisionState } | { rejected: Effect } {
  const g = guard(view, e);
  if ('rejected' in g) return g;
  if (g.current.status !== 'CANDIDATE') {
    const why = `proposal is ${g.current.status}, not waiting for review`;
    return { rejected: { receipt: receiptOf(e, 'CONFLICT', e.payload.recordId, g.current.version, why) } };
  }
  return g;
}

/**
 * An approval under separation of duties (review.ts): a party to the proposal cannot approve where the
 * rules ask for another reviewer, nor can one reviewer count twice; short of the approvers needed it is
 * recorded on the record (no new revision, the record stays CANDIDATE); the last one activates it and
 * records when it was approved.
 */
function approved(view: ProjectionView, e: EventOf<'ProposalApproved'>): Effect {
  const flagged = guard(view, e);
  if (
    !('rejected' in flagged) &&
    flagged.current.status !== 'CANDIDATE' &&
    flaggedForReview(flagged.record)
  ) {
    const [by, ...via] = partiesOf(e.principal, e.actors);
    const required = approversRequired(e.payload.required, flagged.record);
    const d = decideApproval(
      [flagged.record.proposedBy, ...flagged.record.proposedVia],
      [],
      { by: by!, via },
      required,
    );
    if (d.kind === 'SELF')
      return {
        receipt: receiptOf(e, 'REJECTED', e.payload.recordId, flagged.current.version, describeApproval(d)),
      };
    return keptAfterReview(flagged.record, e);
  }
  const g = candidateGuard(view, e);
  if ('rejected' in g) return g.rejected;
  const [by, ...via] = partiesOf(e.principal, e.actors);
  const approval: Approval = { by: by!, via, at: e.recordedAt, eventId: e.eventId };
  const required = approversRequired(e.payload.required, g.record);
  const d = decideApproval(
    [g.record.proposedBy, ...g.record.proposedVia],
    g.record.approvals,
    approval,
    required,
  );
  const id = e.payload.recordId;
  if (d.kind === 'SELF')
    return { receipt: receiptOf(e, 'REJECTED', id, g.current.version, describeApproval(d)) };
  if (d.kind === 'AGAIN')
    return { receipt: receiptOf(e, 'DUPLICATE', id, g.current.version, describeApproval(d)) };
  const approvals = [...g.record.approvals, approval];
  if (d.kind === 'PARTIAL') {
    return {
      record: { ...g.record, approvals },
      receipt: receiptOf(e, 'QUEUED', id, g.current.version, describeApproval(d)),
    };
  }
  const opened = appendRevision({ ...g.record, approvals, approvedAt: e.recordedAt }, e.recordedAt, {
    ...g.current,
    version: g.current.version + 1,
    status: 'ACTIVE',
    eventId: e.eventId,
    changesetId: e.changesetId,
    reason: `approved by ${approvals.map((a) => a.by.slice(a.by.indexOf('|') + 1)).join(', ')}`,
  });
  const rel = proposedRelation(opened);
  const act = activate(opened, rel ? view.record(e.tenant, rel.target) : undefined, e);
  const version = currentRevision(act.record).version;
  return {
    record: act.record,
    others: act.others,
    receipt: receiptOf(e, act.outcome, id, version, act.reason),
  };
}

function rejected(view: ProjectionView, e: EventOf<'ProposalRejected'>): Effect {
  const g = candidateGuard(view, e);
  if ('rejected' in g) return g.rejected;
  const version = g.current.version + 1;
  const record = appendRevision(g.record, e.recordedAt, {
    ...g.current,
    version,
    status: 'REJECTED',
    eventId: e.eventId,
    changesetId: e.changesetId,
    reason: e.payload.reason,
  });
  return { record, receipt: receiptOf(e, 'REJECTED', e.payload.recordId, version, e.payload.reason) };
}

function episodeStored(view: ProjectionView, e: EventOf<'EpisodeStored'>): Effect {
  const p = e.payload;
  if (view.episode(e.tenant, p.episodeId)) {
    return { receipt: receiptOf(e, 'DUPLICATE', null, null, 'episode already stored') };
  }
  const episode: EpisodeState = {
    tenant: e.tenant,
    id: p.episodeId,
    namespace: e.namespace,
    source: p.source,
    occurredAt: p.occurredAt,
    text: p.text,
    turns: p.turns,
    chunks: p.chunks,
    sensitivity: p.sensitivity,
    secretRefs: p.secretRefs,
    flags: p.flags,
    recordedAt: e.recordedAt,
  };
  return { episode, receipt: receiptOf(e, 'ADMITTED', null, null, null) };
}

function accessGranted(view: ProjectionView, e: EventOf<'AccessGranted'>): Effect {
  const p = e.payload;
  if (view.grant(e.tenant, p.grantId)) {
    return { receipt: receiptOf(e, 'REJECTED', p.grantId, null, 'grant id already exists') };
  }
  const grant: GrantState = {
    tenant: e.tenant,
    id: p.grantId,
    grantee: `${p.grantee.iss}|${p.grantee.sub}`,
    namespace: e.namespace,
    maxSensitivity: p.maxSensitivity,
    purposes: p.purposes ? [...p.purposes].sort() : null,
    grantedBy: `${e.principal.iss}|${e.principal.sub}`,
    grantedAt: e.recordedAt,
    revokedAt: null,
    revokeReason: null,
    role: p.role,
  };
  return { grant, receipt: receiptOf(e, 'ADMITTED', p.grantId, null, `granted ${grant.namespace}`) };
}

function accessRevoked(view: ProjectionView, e: EventOf<'AccessRevoked'>): Effect {
  const g = view.grant(e.tenant, e.payload.grantId);
  const id = e.payload.grantId;
  if (!g) return { receipt: receiptOf(e, 'REJECTED', id, null, 'grant not found') };
  if (g.revokedAt) return { receipt: receiptOf(e, 'DUPLICATE', id, null, 'grant already revoked') };
  return {
    grant: { ...g, revokedAt: e.recordedAt, revokeReason: e.payload.reason },
    receipt: receiptOf(e, 'ADMITTED', id, null, 'revoked'),
  };
}

/** One caller, one vote per record: a caller's new verdict (in any recall) replaces their earlier one. */
function feedbackRecorded(view: ProjectionView, e: EventOf<'FeedbackRecorded'>): Effect {
  const p = e.payload;
  const r = view.record(e.tenant, p.recordId);
  if (!r) return { receipt: receiptOf(e, 'REJECTED', p.recordId, null, 'record not found') };
  const who = `${e.principal.iss}|${e.principal.sub}`;
  const before = r.votes[who];
  const counts: { -readonly [K in keyof FeedbackCounts]: number } = { ...r.feedback };
  if (before) counts[countOf(before)] = Math.max(0, counts[countOf(before)] - 1);
  counts[countOf(p.verdict)] += 1;
  const record: RecordState = { ...r, feedback: counts, votes: { ...r.votes, [who]: p.verdict } };
  const reason = before
    ? `feedback ${p.verdict} (replaces this caller's ${before})`
    : `feedback ${p.verdict}`;
  return {
    record,
    receipt: receiptOf(e, 'ADMITTED', p.recordId, currentRevision(r).version, reason),
  };
}

const countOf = (v: FeedbackVerdict): keyof FeedbackCounts =>
  v === 'USED' ? 'used' : v === 'IGNORED' ? 'ignored' : 'wrong';
