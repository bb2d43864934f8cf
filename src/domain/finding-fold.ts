import type { EventOf } from './events.ts';
import type { Effect, FindingState, ProjectionView } from './projection-state.ts';
import { receiptOf } from './receipts.ts';

/** Raising an open finding again changes nothing (DUPLICATE); a resolved one reopens. */
export function findingRaised(view: ProjectionView, e: EventOf<'FindingRaised'>): Effect {
  const p = e.payload;
  const prior = view.finding?.(e.tenant, p.findingId);
  if (prior && prior.resolvedAt === null)
    return { receipt: receiptOf(e, 'DUPLICATE', null, null, `finding ${p.findingId} is open`) };
  if (prior?.dismissed)
    return { receipt: receiptOf(e, 'DUPLICATE', null, null, `finding ${p.findingId} was dismissed`) };
  const finding: FindingState = {
    tenant: e.tenant,
    id: p.findingId,
    type: p.findingType,
    severity: p.severity,
    namespace: e.namespace,
    recordIds: [...p.recordIds],
    entityIds: [...p.entityIds],
    reason: p.reason,
    raisedAt: e.recordedAt,
    raised: (prior?.raised ?? 0) + 1,
    resolvedAt: null,
    resolvedBy: null,
    resolveReason: null,
    dismissed: false,
  };
  return { finding, receipt: receiptOf(e, 'ADMITTED', null, null, `finding ${p.findingId} raised`) };
}

export function findingResolved(view: ProjectionView, e: EventOf<'FindingResolved'>): Effect {
  const f = view.finding?.(e.tenant, e.payload.findingId);
  if (!f) return { receipt: receiptOf(e, 'REJECTED', null, null, 'finding not found') };
  if (f.resolvedAt) return { receipt: receiptOf(e, 'DUPLICATE', null, null, 'finding already resolved') };
  return {
    finding: {
      ...f,
      resolvedAt: e.recordedAt,
      resolvedBy: `${e.principal.iss}|${e.principal.sub}`,
      resolveReason: e.payload.reason,
      dismissed: e.payload.dismissed,
    },
    receipt: receiptOf(
      e,
      'ADMITTED',
      null,
      null,
      `finding ${f.id} ${e.payload.dismissed ? 'dismissed' : 'resolved'}`,
    ),
  };
}
