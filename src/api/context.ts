import type { Principal } from '../domain/principal.ts';
import type { TokenVerifier } from '../ports/token-verifier.ts';
import { isMuninnError } from '../domain/errors.ts';
import { gqlError } from './errors.ts';

export interface ApiContext {
  readonly principal: Principal;
}

/** `Authorization: Bearer <jwt>` → Principal, or UNAUTHENTICATED (HTTP 401). Every operation needs one. */
export async function authenticate(
  verifier: TokenVerifier,
  authorization: string | undefined,
): Promise<Principal> {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!m) throw gqlError('UNAUTHENTICATED', 'a bearer token is required', 401);
  try {
    return await verifier.verify(m[1]!);
  } catch (e) {
    if (isMuninnError(e)) throw gqlError(e.code, e.message, e.code === 'FORBIDDEN' ? 403 : 401);
    throw gqlError('UNAUTHENTICATED', 'invalid token', 401);
  }
}
