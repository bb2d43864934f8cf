import type { Principal } from '../domain/principal.ts';
import type { Logger } from '../ports/logger.ts';
import type { TokenVerifier } from '../ports/token-verifier.ts';
import { isMuninnError } from '../domain/errors.ts';
import { gqlError } from './errors.ts';

export interface ApiContext {
  readonly principal: Principal;
}

/** Where a failed authentication is logged, and what is known about the caller besides the token. */
export interface AuthAudit {
  readonly log: Logger;
  readonly transport: 'http' | 'ws' | (string & {});
  /** The peer's address as the socket sees it (a proxy's, behind one). */
  readonly remote: string | undefined;
}

/**
 * `Authorization: Bearer <jwt>` → Principal, or UNAUTHENTICATED (HTTP 401). Every operation needs one.
 * With `audit`, each failure is logged (warn) with its code and reason, the iss/sub the token claims
 * (unverified, when its payload decodes) and the remote address: never the token itself.
 */
export async function authenticate(
  verifier: TokenVerifier,
  authorization: string | undefined,
  audit?: AuthAudit,
): Promise<Principal> {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!m) {
    logFailure(audit, 'UNAUTHENTICATED', authorization ? 'not a bearer token' : 'no bearer token', undefined);
    throw gqlError('UNAUTHENTICATED', 'a bearer token is required', 401);
  }
  const token = m[1]!;
  try {
    return await verifier.verify(token);
  } catch (e) {
    if (isMuninnError(e)) {
      logFailure(audit, e.code, e.message, token);
      throw gqlError(e.code, e.message, e.code === 'FORBIDDEN' ? 403 : 401);
    }
    logFailure(audit, 'UNAUTHENTICATED', 'invalid token', token);
    throw gqlError('UNAUTHENTICATED', 'invalid token', 401);
  }
}

function logFailure(audit: AuthAudit | undefined, code: string, reason: string, token: string | undefined) {
  if (!audit) return;
  // The verifier's reasons are short and token-free by contract; refuse to trust that blindly.
  const safeReason = token && reason.includes(token) ? 'invalid token' : reason;
  audit.log.warn(
    {
      event: 'auth_failed',
      transport: audit.transport,
      code,
      reason: safeReason,
      remote: audit.remote,
      ...(token ? { claimed: claimedIdentity(token) } : {}),
    },
    'authentication failed',
  );
}

const MAX_PAYLOAD_CHARS = 8192;
const MAX_CLAIM_CHARS = 200;

/** The iss and sub a compact JWS says it carries, without verifying anything; {} when it does not decode. */
export function claimedIdentity(token: string): { iss?: string; sub?: string } {
  const payload = token.split('.')[1];
  if (!payload || payload.length > MAX_PAYLOAD_CHARS) return {};
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return {};
  }
  if (!claims || typeof claims !== 'object') return {};
  const { iss, sub } = claims as Record<string, unknown>;
  const short = (v: unknown) => (typeof v === 'string' ? v.slice(0, MAX_CLAIM_CHARS) : undefined);
  return {
    ...(short(iss) !== undefined ? { iss: short(iss) } : {}),
    ...(short(sub) !== undefined ? { sub: short(sub) } : {}),
  };
}
