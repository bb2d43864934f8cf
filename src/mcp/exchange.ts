import { createHash } from 'node:crypto';
import { MuninnError } from '../domain/errors.ts';

/**
 * The bridge's half of OAuth 2.0 Token Exchange (RFC 8693). The bridge never forwards the token its caller
 * sent (audience: the bridge); it presents that token as the subject at the token endpoint, authenticated
 * as itself (client id + secret), and asks for a token for Muninn's API audience. The endpoint (the IdP's;
 * in development Muninn's own `/dev/token`) issues one for the same subject and delegation chain, with the
 * bridge as its `client_id` and a lifetime no longer than the subject token's. Exchanged tokens are cached per
 * subject token until shortly before they expire.
 */
export interface ExchangeOptions {
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The audience to ask for: Muninn's API (MUNINN_AUTH_AUDIENCE). */
  readonly audience: string;
  readonly now?: () => number;
}

export interface TokenExchanger {
  /** A token for the API audience, for the subject of `subjectToken`, narrowed to `scopes`. */
  exchange(subjectToken: string, scopes: readonly string[]): Promise<string>;
}

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const MAX_CACHED = 1000;
const REFRESH_MARGIN_MS = 30_000;

export function tokenExchanger(o: ExchangeOptions): TokenExchanger {
  const now = o.now ?? Date.now;
  const cache = new Map<string, { token: string; until: number }>();
  const basic = Buffer.from(
    `${encodeURIComponent(o.clientId)}:${encodeURIComponent(o.clientSecret)}`,
    'utf8',
  ).toString('base64');

  return {
    async exchange(subjectToken, scopes) {
      const scope = [...scopes].sort().join(' ');
      const key = createHash('sha256').update(`${scope}\u0000${subjectToken}`).digest('base64url');
      const hit = cache.get(key);
      if (hit && hit.until > now()) return hit.token;
      cache.delete(key);
      const issued = await request(o, basic, subjectToken, scope);
      const until = now() + issued.expiresInS * 1000 - REFRESH_MARGIN_MS;
      if (until > now()) {
        if (cache.size >= MAX_CACHED) prune(cache, now());
        cache.set(key, { token: issued.token, until });
      }
      return issued.token;
    },
  };
}

async function request(
  o: ExchangeOptions,
  basic: string,
  subjectToken: string,
  scope: string,
): Promise<{ token: string; expiresInS: number }> {
  const form = new URLSearchParams({
    grant_type: TOKEN_EXCHANGE_GRANT,
    subject_token: subjectToken,
    subject_token_type: ACCESS_TOKEN_TYPE,
    requested_token_type: ACCESS_TOKEN_TYPE,
    audience: o.audience,
    ...(scope ? { scope } : {}),
  });
  let res: Response;
  try {
    res = await fetch(o.url, {
      method: 'POST',
      headers: {
        authorization: `Basic ${basic}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: form.toString(),
      signal: AbortSignal.timeout(15_000),
    });
  } catch {
    throw new MuninnError('UNAVAILABLE', 'the token endpoint is unreachable');
  }
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (res.ok && typeof body['access_token'] === 'string') {
    const expiresIn = typeof body['expires_in'] === 'number' ? body['expires_in'] : 60;
    return { token: body['access_token'], expiresInS: expiresIn };
  }
  // invalid_grant: the subject token was refused (expired, revoked, wrong audience) — the caller's problem.
  // Anything else (invalid_client, a server error) is the bridge's configuration or the endpoint's state.
  if (body['error'] === 'invalid_grant' || body['error'] === 'invalid_scope')
    throw new MuninnError('UNAUTHENTICATED', 'the token exchange refused the token');
  throw new MuninnError('UNAVAILABLE', `the token exchange failed (${res.status})`);
}

function prune(cache: Map<string, { until: number }>, t: number): void {
  for (const [k, v] of cache) if (v.until <= t) cache.delete(k);
  // Still full: drop the oldest entries (Map keeps insertion order).
  for (const k of cache.keys()) {
    if (cache.size < MAX_CACHED) break;
    cache.delete(k);
  }
}
