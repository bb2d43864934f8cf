import type { CryptoKey } from 'jose';
import type { Principal } from '../../domain/principal.ts';

/**
 * Tokens whose signature this process has already checked, with the key that checked it. Why: an agent
 * presents the same access token on every call until it expires, and checking an ES256 signature again
 * each time was ~3 % of `muninn serve`'s samples in the write benchmark (webcrypto's ECDSA verify, on
 * every request, refusals included).
 *
 * A hit is only ever the same token string (any other byte is a miss and a full check), and it is used only
 * while:
 * - the key the JWKS gives for its header now is the very key object that checked it. A changed JWKS file
 *   or a refetched remote set imports new key objects, so a rotation or a removed key sends every cached
 *   token through a full check again;
 * - the token has not expired (exp plus the clock skew, checked on every use).
 * Every other claim was checked on the first use and cannot become invalid later: iss, aud, sub and the
 * tenant are in the signed payload, nbf only moves into the past, and the lifetime left only shrinks.
 * At most `max` tokens are kept, the least recently used dropped first.
 */
export interface VerifiedToken {
  readonly principal: Principal;
  readonly key: CryptoKey;
  /** The token's exp claim, seconds since the epoch. */
  readonly exp: number;
}

export class VerifiedTokens {
  private readonly byToken = new Map<string, VerifiedToken>();

  constructor(private readonly max = 1024) {}

  get(token: string): VerifiedToken | undefined {
    const hit = this.byToken.get(token);
    if (!hit) return undefined;
    this.byToken.delete(token);
    this.byToken.set(token, hit);
    return hit;
  }

  set(token: string, entry: VerifiedToken): void {
    this.byToken.delete(token);
    this.byToken.set(token, entry);
    while (this.byToken.size > this.max) this.byToken.delete(this.byToken.keys().next().value!);
  }

  delete(token: string): void {
    this.byToken.delete(token);
  }

  get size(): number {
    return this.byToken.size;
  }
}
