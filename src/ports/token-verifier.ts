import type { Principal } from '../domain/principal.ts';

/** Turns a bearer token into a Principal or throws MuninnError('UNAUTHENTICATED'). */
export interface TokenVerifier {
  verify(token: string): Promise<Principal>;
}
