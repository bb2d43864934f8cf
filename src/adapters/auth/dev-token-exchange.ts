import { createHash, timingSafeEqual } from 'node:crypto';
import { isMuninnError } from '../../domain/errors.ts';
import { hasScope, Scopes, type Actor, type Principal, type Scope } from '../../domain/principal.ts';
import type { TokenVerifier } from '../../ports/token-verifier.ts';
import { signDevToken, type DevActClaim } from './dev-keys.ts';

/**
 * A development stand-in for the IdP's RFC 8693 token endpoint, served by `muninn serve` at /dev/token
 * outside production when MUNINN_MCP_CLIENT_SECRET is set. It does what the IdP does for the MCP bridge:
 * authenticates the bridge (HTTP Basic, its client id and secret), verifies the subject token for the
 * bridge's audience with the one token verifier, and issues a token for the API audience with the same
 * subject, tenant, delegation chain and scopes (narrowed to those requested), a lifetime of at most the
 * subject token's (and MAX_TTL_S), and `client_id` naming the bridge (RFC 9068). Signed with the
 * development key, like `muninn token`. Only the registered client can redeem bridge-audience tokens, so a
 * bridge token stolen from a client is worth nothing at the API.
 *
 * No `act` entry for the bridge: the request carries no actor token, so this is RFC 8693 impersonation,
 * not delegation — and in Muninn every `act` entry is an agent with grants and a party of its own, so the
 * bridge there would narrow every caller to the bridge's grants and make all its callers one party to
 * separation of duties (no one could approve a norm proposed through it). The bridge is part of the
 * deployment, like the API; the caller's own agents stay in the chain.
 */
export interface DevTokenExchangeOptions {
  readonly stateDir: string;
  readonly issuer: string;
  readonly tenantClaim: string;
  /** Verifies subject tokens: audience = the bridge's. */
  readonly subjectVerifier: TokenVerifier;
  /** The only audience issued: Muninn's API. */
  readonly targetAudience: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly now?: () => number;
}

export type FormAnswer = { status: number; body: unknown; headers?: Record<string, string> };

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const TOKEN_TYPES = new Set([
  'urn:ietf:params:oauth:token-type:access_token',
  'urn:ietf:params:oauth:token-type:jwt',
]);
const MAX_TTL_S = 300;

export function devTokenExchange(
  o: DevTokenExchangeOptions,
): (form: URLSearchParams, authorization: string | undefined) => Promise<FormAnswer> {
  const now = o.now ?? (() => Math.floor(Date.now() / 1000));
  return async (form, authorization) => {
    if (!clientAuthenticated(authorization, o.clientId, o.clientSecret))
      return { status: 401, body: { error: 'invalid_client' }, headers: { 'www-authenticate': 'Basic' } };
    if (form.get('grant_type') !== GRANT) return oauthError('unsupported_grant_type');
    const subjectToken = form.get('subject_token');
    if (!subjectToken || !TOKEN_TYPES.has(form.get('subject_token_type') ?? ''))
      return oauthError(
        'invalid_request',
        'subject_token and an access_token subject_token_type are required',
      );
    const audience = form.get('audience') ?? o.targetAudience;
    if (audience !== o.targetAudience || form.has('resource')) return oauthError('invalid_target');
    let subject: Principal;
    try {
      subject = await o.subjectVerifier.verify(subjectToken);
    } catch (e) {
      return oauthError('invalid_grant', isMuninnError(e) ? e.message : 'invalid subject token');
    }
    const scopes = narrowed(subject, form.get('scope'));
    if (scopes === undefined) return oauthError('invalid_scope');
    // One instant for the TTL and the signature: a clock tick between them would let the exchanged
    // token outlive its subject by a second.
    const issuedAt = now();
    const ttl = Math.min(MAX_TTL_S, (subject.expiresAt ?? 0) - issuedAt);
    if (ttl <= 0) return oauthError('invalid_grant', 'token expired');
    const token = await signDevToken({
      stateDir: o.stateDir,
      issuer: o.issuer,
      audience: o.targetAudience,
      tenant: subject.tenant,
      sub: subject.sub,
      scopes,
      ttlSeconds: ttl,
      issuedAt,
      tenantClaim: o.tenantClaim,
      clientId: o.clientId,
      ...chain(subject.actors),
    });
    return {
      status: 200,
      body: {
        access_token: token,
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        token_type: 'Bearer',
        expires_in: ttl,
        scope: scopes.join(' '),
      },
    };
  };
}

const oauthError = (error: string, description?: string): FormAnswer => ({
  status: 400,
  body: { error, ...(description ? { error_description: description } : {}) },
});

/** The requested scopes the subject holds (all its scopes when none are requested); undefined if none. */
function narrowed(subject: Principal, requested: string | null): Scope[] | undefined {
  const held = Scopes.filter((s) => hasScope(subject, s));
  if (!requested) return [...subject.scopes];
  const asked = requested.split(/\s+/).filter(Boolean);
  const out = held.filter((s) => asked.includes(s));
  return out.length > 0 ? out : undefined;
}

/** The subject's delegation chain, unchanged (most recent actor outermost). */
function chain(actors: readonly Actor[]): { act?: DevActClaim } {
  let act: DevActClaim | undefined;
  for (const a of [...actors].reverse())
    act = { sub: a.sub, ...(a.iss ? { iss: a.iss } : {}), ...(act ? { act } : {}) };
  return act ? { act } : {};
}

function clientAuthenticated(authorization: string | undefined, id: string, secret: string): boolean {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization ?? '');
  if (!m) return false;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return false;
  let givenId: string;
  let givenSecret: string;
  try {
    givenId = decodeURIComponent(decoded.slice(0, colon));
    givenSecret = decodeURIComponent(decoded.slice(colon + 1));
  } catch {
    return false;
  }
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return givenId === id && timingSafeEqual(digest(givenSecret), digest(secret));
}
