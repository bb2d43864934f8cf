import type { EventOf, LedgerEvent } from './events.ts';
import type { Effect, ProjectionView, Receipt } from './fold.ts';
import type { Outcome } from './model.ts';

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

export function holdPlaced(view: ProjectionView, e: EventOf<'HoldPlaced'>): Effect {
  const p = e.payload;
  if (view.hold?.(e.tenant, p.holdId)) return { receipt: receipt(e, 'REJECTED', 'hold id already exists') };
  const hold: HoldState = {
    tenant: e.tenant,
    id: p.holdId,
    target: p.target,
    namespace: e.namespace,
    recordId: p.recordId,
    reason: p.reason,
    placedBy: `${e.principal.iss}|${e.principal.sub}`,
    placedAt: e.recordedAt,
    releasedAt: null,
    releasedBy: null,
    releaseReason: null,
  };
  return { hold, receipt: receipt(e, 'ADMITTED', `hold ${p.holdId} placed`) };
}

export function holdReleased(view: ProjectionView, e: EventOf<'HoldReleased'>): Effect {
  const h = view.hold?.(e.tenant, e.payload.holdId);
  if (!h) return { receipt: receipt(e, 'REJECTED', 'hold not found') };
  if (h.releasedAt) return { receipt: receipt(e, 'DUPLICATE', 'hold already released') };
  return {
    hold: {
      ...h,
      releasedAt: e.recordedAt,
      releasedBy: `${e.principal.iss}|${e.principal.sub}`,
      releaseReason: e.payload.reason,
    },
    receipt: receipt(e, 'ADMITTED', `hold ${h.id} released`),
  };
}

function receipt(e: LedgerEvent, outcome: Outcome, reason: string): Receipt {
  return {
    tenant: e.tenant,
    idempotencyKey: e.idempotencyKey,
    commandHash: e.commandHash,
    eventId: e.eventId,
    outcome,
    recordId: null,
    version: null,
    reason,
    recordedAt: e.recordedAt,
  };
}
