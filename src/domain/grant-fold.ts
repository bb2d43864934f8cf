import type { EventOf } from './events.ts';
import type { Effect, GrantState, ProjectionView } from './projection-state.ts';
import { receiptOf } from './receipts.ts';

export function accessGranted(view: ProjectionView, e: EventOf<'AccessGranted'>): Effect {
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

export function accessRevoked(view: ProjectionView, e: EventOf<'AccessRevoked'>): Effect {
  const g = view.grant(e.tenant, e.payload.grantId);
  const id = e.payload.grantId;
  if (!g) return { receipt: receiptOf(e, 'REJECTED', id, null, 'grant not found') };
  if (g.revokedAt) return { receipt: receiptOf(e, 'DUPLICATE', id, null, 'grant already revoked') };
  return {
    grant: { ...g, revokedAt: e.recordedAt, revokeReason: e.payload.reason },
    receipt: receiptOf(e, 'ADMITTED', id, null, 'revoked'),
  };
}
