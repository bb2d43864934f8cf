import type { EventOf } from './events.ts';
import type { Effect, HoldState, ProjectionView } from './projection-state.ts';
import { receiptOf } from './receipts.ts';

export function holdPlaced(view: ProjectionView, e: EventOf<'HoldPlaced'>): Effect {
  const p = e.payload;
  if (view.hold?.(e.tenant, p.holdId))
    return { receipt: receiptOf(e, 'REJECTED', null, null, 'hold id already exists') };
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
  return { hold, receipt: receiptOf(e, 'ADMITTED', null, null, `hold ${p.holdId} placed`) };
}

export function holdReleased(view: ProjectionView, e: EventOf<'HoldReleased'>): Effect {
  const h = view.hold?.(e.tenant, e.payload.holdId);
  if (!h) return { receipt: receiptOf(e, 'REJECTED', null, null, 'hold not found') };
  if (h.releasedAt) return { receipt: receiptOf(e, 'DUPLICATE', null, null, 'hold already released') };
  return {
    hold: {
      ...h,
      releasedAt: e.recordedAt,
      releasedBy: `${e.principal.iss}|${e.principal.sub}`,
      releaseReason: e.payload.reason,
    },
    receipt: receiptOf(e, 'ADMITTED', null, null, `hold ${h.id} released`),
  };
}
