import { z } from 'zod';
import { canonicalJson, sha256Hex } from './canonical.ts';
import type { Envelope } from './events.ts';
import type { Principal } from './principal.ts';

export const IdempotencyKey = z.string().min(1).max(256);
export const Purpose = z.string().min(1).max(200);

/** The hash that decides "same command" for idempotency: the validated input minus transport options. */
export const commandHash = (kind: string, cmd: object): string => sha256Hex(canonicalJson({ kind, cmd }));

export interface DecideContext {
  readonly principal: Principal;
  readonly now: Date;
  readonly newId: () => string;
}

/**
 * Idempotency keys live in one key space per principal: the stored key is a tag of (iss, sub), the key's
 * origin, then the key. Another principal's identical key is another key, so a receipt is never returned
 * to anyone but its writer, and nobody can use up a key someone else will use. Keys the service derives
 * (`approve:<id>:v<n>`, `revoke:<grantId>`, feedback) have origin "d", a writer's own keys "u" (or "h",
 * hashed, when long): a writer's key can never equal a derived one, not even its own.
 */
export function receiptKey(
  principal: Pick<Principal, 'iss' | 'sub'>,
  key: string,
  origin: 'user' | 'derived' = 'user',
): string {
  const tag = sha256Hex(`${principal.iss}|${principal.sub}`).slice(0, 24);
  if (origin === 'derived') return `${tag}:d:${key}`;
  // Short enough that a suffix (#stmt:n#entity:<uuid>) still fits the envelope's 256 characters.
  return key.length <= 128 ? `${tag}:u:${key}` : `${tag}:h:${sha256Hex(key)}`;
}

export function envelope(
  ctx: DecideContext,
  cmd: { idempotencyKey: string; derivedKey?: boolean; purpose: string; changesetId?: string | undefined },
  namespace: string,
  hash: string,
  suffix = '',
): Omit<Envelope, 'type' | 'schemaVersion'> {
  return {
    eventId: ctx.newId(),
    tenant: ctx.principal.tenant,
    namespace,
    idempotencyKey:
      receiptKey(ctx.principal, cmd.idempotencyKey, cmd.derivedKey ? 'derived' : 'user') + suffix,
    commandHash: hash,
    principal: { iss: ctx.principal.iss, sub: ctx.principal.sub },
    actors: ctx.principal.actors.map((a) => ({ iss: a.iss ?? null, sub: a.sub })),
    purpose: cmd.purpose,
    changesetId: cmd.changesetId ?? null,
    recordedAt: ctx.now.toISOString(),
  };
}
