import { z } from 'zod';
import { MUNINN_NS, uuidV5 } from './canonical.ts';
import type { LedgerEvent } from './events.ts';
import { NamespacePath, Sensitivities } from './model.ts';
import { GrantRoles } from './stewardship-model.ts';
import {
  commandHash,
  envelope,
  IdempotencyKey,
  Purpose,
  receiptKey,
  type DecideContext,
} from './command-envelope.ts';

export const GrantAccessCommand = z.object({
  /** The person or agent, keyed on (iss, sub); iss defaults to the granting admin's issuer. */
  grantee: z.object({ iss: z.string().min(1).max(500).optional(), sub: z.string().min(1).max(500) }),
  namespace: NamespacePath,
  maxSensitivity: z.enum(Sensitivities),
  /** Purposes the grant is for; absent = any purpose. */
  purposes: z.array(Purpose).min(1).max(32).optional(),
  /** OWNER or STEWARD also names the grantee the subtree's owner or steward; absent = READER. */
  role: z.enum(GrantRoles).optional(),
  reason: z.string().min(1).max(2000),
  idempotencyKey: IdempotencyKey,
});
export type GrantAccessCommand = z.infer<typeof GrantAccessCommand>;

export const RevokeAccessCommand = z.object({
  grantId: z.string().min(1).max(200),
  reason: z.string().min(1).max(2000),
  idempotencyKey: IdempotencyKey.optional(),
});
export type RevokeAccessCommand = z.infer<typeof RevokeAccessCommand>;

export function decideGrant(ctx: DecideContext, cmd: GrantAccessCommand): LedgerEvent {
  const hash = commandHash('grant', cmd);
  return {
    ...envelope(ctx, { idempotencyKey: cmd.idempotencyKey, purpose: 'administration' }, cmd.namespace, hash),
    type: 'AccessGranted',
    schemaVersion: 1,
    payload: {
      // Deterministic: a retried grant names the same grant (in the granting admin's key space).
      grantId: uuidV5(
        `grant|${ctx.principal.tenant}|${receiptKey(ctx.principal, cmd.idempotencyKey)}`,
        MUNINN_NS,
      ),
      grantee: { iss: cmd.grantee.iss ?? ctx.principal.iss, sub: cmd.grantee.sub },
      maxSensitivity: cmd.maxSensitivity,
      purposes: cmd.purposes ? [...new Set(cmd.purposes)].sort() : null,
      role: cmd.role ?? 'READER',
    },
  };
}

export function decideRevoke(ctx: DecideContext, cmd: RevokeAccessCommand, namespace: string): LedgerEvent {
  const key = cmd.idempotencyKey
    ? { idempotencyKey: cmd.idempotencyKey }
    : { idempotencyKey: `revoke:${cmd.grantId}`, derivedKey: true };
  return {
    ...envelope(ctx, { ...key, purpose: 'administration' }, namespace, commandHash('revoke', cmd)),
    type: 'AccessRevoked',
    schemaVersion: 1,
    payload: { grantId: cmd.grantId, reason: cmd.reason },
  };
}
