import type { LedgerEvent, EventOf } from './events.ts';
import type {
  Outcome,
  RecordClass,
  RecordStatus,
  Sensitivity,
  SourceSpan,
  Statement,
  TimeSource,
} from './model.ts';

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
  /** Oldest first; the last one is current and has retiredAt === null. */
  readonly revisions: readonly RevisionState[];
}

export interface EntityState {
  readonly tenant: string;
  readonly id: string;
  readonly name: string;
  readonly type: string | null;
  readonly aliases: readonly string[];
  readonly externalIds: readonly string[];
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
}

/** What one event changes. `receipt` is absent for a redelivered command (same key, same input). */
export interface Effect {
  readonly record?: RecordState;
  readonly entity?: EntityState;
  readonly receipt?: Receipt;
}

export const currentRevision = (r: RecordState): RevisionState => r.revisions[r.revisions.length - 1]!;

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
  }
}

function receipt(
  e: LedgerEvent,
  outcome: Outcome,
  recordId: string | null,
  version: number | null,
  reason: string | null,
): Receipt {
  return {
    tenant: e.tenant,
    idempotencyKey: e.idempotencyKey,
    commandHash: e.commandHash,
    eventId: e.eventId,
    outcome,
    recordId,
    version,
    reason,
    recordedAt: e.recordedAt,
  };
}

function proposed(view: ProjectionView, e: EventOf<'RecordProposed'>): Effect {
  const p = e.payload;
  if (view.record(e.tenant, p.recordId)) {
    return { receipt: receipt(e, 'REJECTED', p.recordId, null, 'record id already exists') };
  }
  const record: RecordState = {
    tenant: e.tenant,
    id: p.recordId,
    namespace: e.namespace,
    class: p.class,
    sensitivity: p.sensitivity,
    confidence: p.confidence,
    timeSource: p.timeSource,
    rationale: p.rationale,
    about: p.about,
    sources: p.sources,
    ext: p.ext,
    createdAt: e.recordedAt,
    proposedBy: `${e.principal.iss}|${e.principal.sub}`,
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
  };
  const outcome: Outcome = p.status === 'CANDIDATE' ? 'QUEUED' : 'ADMITTED';
  return { record, receipt: receipt(e, outcome, p.recordId, 1, null) };
}

/** Guards every change to an existing record: it must exist in this tenant and match expectedVersion. */
function guard(
  view: ProjectionView,
  e: LedgerEvent & { payload: { recordId: string; expectedVersion: number } },
): { record: RecordState; current: RevisionState } | { rejected: Effect } {
  const { recordId, expectedVersion } = e.payload;
  const record = view.record(e.tenant, recordId);
  if (!record) return { rejected: { receipt: receipt(e, 'REJECTED', recordId, null, 'record not found') } };
  const current = currentRevision(record);
  if (current.version !== expectedVersion) {
    return {
      rejected: {
        receipt: receipt(
          e,
          'CONFLICT',
          recordId,
          current.version,
          `expected version ${expectedVersion}, current version is ${current.version}`,
        ),
      },
    };
  }
  if (current.status === 'RETRACTED' || current.status === 'ERASED') {
    return {
      rejected: { receipt: receipt(e, 'REJECTED', recordId, current.version, `record is ${current.status}`) },
    };
  }
  return { record, current };
}

/** Close the current revision at `at` and append `next` as the new current one. */
function appendRevision(
  record: RecordState,
  at: string,
  next: Omit<RevisionState, 'retiredAt' | 'recordedAt'>,
): RecordState {
  const revisions = record.revisions.map((r, i) =>
    i === record.revisions.length - 1 ? { ...r, retiredAt: at } : r,
  );
  return { ...record, revisions: [...revisions, { ...next, recordedAt: at, retiredAt: null }] };
}

function revised(view: ProjectionView, e: EventOf<'RecordRevised'>): Effect {
  const g = guard(view, e);
  if ('rejected' in g) return g.rejected;
  const p = e.payload;
  const validTo = p.validTo === null ? g.current.validTo : typeof p.validTo === 'string' ? p.validTo : null;
  const validFrom = p.validFrom ?? g.current.validFrom;
  if (validTo !== null && validTo <= validFrom) {
    return {
      receipt: receipt(e, 'REJECTED', p.recordId, g.current.version, 'validTo must be after validFrom'),
    };
  }
  const version = g.current.version + 1;
  const record = appendRevision(g.record, e.recordedAt, {
    version,
    statement: p.statement ?? g.current.statement,
    status: g.current.status,
    validFrom,
    validTo,
    changesetId: e.changesetId,
    eventId: e.eventId,
    reason: null,
  });
  return { record, receipt: receipt(e, 'REVISED', p.recordId, version, null) };
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
  return { record, receipt: receipt(e, 'RETRACTED', e.payload.recordId, version, e.payload.reason) };
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
      }
    : {
        tenant: e.tenant,
        id: p.entityId,
        name: p.name,
        type: p.type,
        aliases: union([], p.aliases),
        externalIds: union([], p.externalIds),
      };
  return { entity, receipt: receipt(e, 'ADMITTED', null, null, null) };
}

const union = (a: readonly string[], b: readonly string[]): string[] => [...new Set([...a, ...b])].sort();
