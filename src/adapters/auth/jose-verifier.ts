import { statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeProtectedHeader,
  errors as joseErrors,
  jwtVerify,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
  type JWSAlgorithm,
  type JWTPayload,
  type JWTVerifyOptions,
  type CryptoKey,
} from 'jose';
import { forbidden, isMuninnError, unauthenticated, type MuninnError } from '../../domain/errors.ts';
import { TenantId } from '../../domain/model.ts';
import { hasScope, Scopes, type Actor, type Principal, type Scope } from '../../domain/principal.ts';
import type { TokenVerifier } from '../../ports/token-verifier.ts';
import { VerifiedTokens } from './verified-tokens.ts';

export type JwksSource =
  { readonly kind: 'url'; readonly url: string } | { readonly kind: 'file'; readonly path: string };

export interface JoseVerifierOptions {
  readonly jwks: JwksSource;
  readonly issuer: string;
  readonly audience: string;
  /** Allowed JWS algorithms. `none` and every symmetric (HS*) algorithm are dropped regardless. */
  readonly algorithms: readonly string[];
  readonly clockSkewS: number;
  /** Name of the claim that carries the tenant id. */
  readonly tenantClaim: string;
  /** When set, a valid token without this scope is FORBIDDEN (not UNAUTHENTICATED). */
  readonly requireScope?: Scope;
  /**
   * Longest lifetime accepted, in seconds: exp − iat when the token states iat, and exp − now (within the
   * clock skew) in any case, so a token cannot claim a recent iat and a far exp. Unset = no maximum.
   */
  readonly maxTokenTtlS?: number;
}

/** Longest compact JWS we even try to parse; anything bigger is garbage or an attack. */
const MAX_TOKEN_CHARS = 16 * 1024;
const COMPACT_JWS_RE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const MAX_JWKS_FILE_BYTES = 1024 * 1024;
const MAX_ACT_DEPTH = 16;
const MAX_CLAIM_CHARS = 1024;

const KNOWN_SCOPES: ReadonlySet<string> = new Set(Scopes);

type KeyResolver = (header: JWSHeaderParameters, token: FlattenedJWSInput) => Promise<CryptoKey>;

/**
 * Verifies OAuth2/OIDC access tokens (compact JWS) against a JWKS and maps them to a Principal.
 * Fails closed: every problem, including an unreachable or unreadable JWKS, is UNAUTHENTICATED.
 */
export function createJoseVerifier(opts: JoseVerifierOptions): TokenVerifier {
  const checks = verifierChecks(opts);
  return {
    async verify(token: string): Promise<Principal> {
      if (typeof token !== 'string' || token.length === 0) throw unauthenticated('missing token');
      if (token.length > MAX_TOKEN_CHARS) throw unauthenticated('token too large');
      if (!COMPACT_JWS_RE.test(token)) throw unauthenticated('malformed token');

      const principal = (await fromCache(checks, token)) ?? (await fullCheck(checks, token));
      if (opts.requireScope !== undefined && !hasScope(principal, opts.requireScope)) {
        throw forbidden(`missing scope: ${opts.requireScope}`);
      }
      return principal;
    },
  };
}

/** What one verifier checks tokens with, built once from its options. */
interface VerifierChecks {
  readonly opts: JoseVerifierOptions;
  readonly getKey: KeyResolver;
  readonly verifyOptions: JWTVerifyOptions;
  // Tokens already checked, with the key that checked them (see verified-tokens.ts for when one is reused).
  readonly verified: VerifiedTokens;
}

function verifierChecks(opts: JoseVerifierOptions): VerifierChecks {
  const algorithms = allowedAlgorithms(opts.algorithms);
  if (algorithms.length === 0) {
    // A configuration error, surfaced at startup rather than as a stream of 401s.
    throw new Error(
      'createJoseVerifier: no usable asymmetric algorithm in `algorithms` (none/HS* are refused)',
    );
  }
  if (!opts.issuer || !opts.audience) throw new Error('createJoseVerifier: issuer and audience are required');
  if (!opts.tenantClaim) throw new Error('createJoseVerifier: tenantClaim is required');

  const getKey: KeyResolver =
    opts.jwks.kind === 'url' ? remoteResolver(opts.jwks.url) : fileResolver(opts.jwks.path);

  const verifyOptions = {
    issuer: opts.issuer,
    audience: opts.audience,
    algorithms,
    clockTolerance: opts.clockSkewS,
    requiredClaims: ['exp', 'sub', opts.tenantClaim],
  };
  return { opts, getKey, verifyOptions, verified: new VerifiedTokens() };
}

/** The cached principal while its key is still the JWKS's and it has not expired; else undefined. */
async function fromCache(
  { opts, getKey, verified }: VerifierChecks,
  token: string,
): Promise<Principal | undefined> {
  const hit = verified.get(token);
  if (!hit) return undefined;
  // As jose decides it: expired once exp <= now − skew, in whole seconds.
  if (hit.exp <= Math.floor(Date.now() / 1000) - opts.clockSkewS) {
    verified.delete(token);
    throw unauthenticated('token expired');
  }
  const [protectedHeader = '', payload = '', signature = ''] = token.split('.');
  const key = await getKey(decodeProtectedHeader(token), {
    protected: protectedHeader,
    payload,
    signature,
  }).catch(() => undefined); // no key now: the full check below says why, precisely
  if (key === hit.key) return hit.principal;
  verified.delete(token);
  return undefined;
}

async function fullCheck(
  { opts, getKey, verifyOptions, verified }: VerifierChecks,
  token: string,
): Promise<Principal> {
  let used: CryptoKey | undefined;
  const keyFor: KeyResolver = async (header, t) => (used = await getKey(header, t));
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keyFor, verifyOptions));
  } catch (e) {
    throw toUnauthenticated(e);
  }
  const principal = toPrincipal(payload, opts);
  if (used && typeof payload.exp === 'number')
    verified.set(token, { principal, key: used, exp: payload.exp });
  return principal;
}

function allowedAlgorithms(list: readonly string[]): JWSAlgorithm[] {
  const out: JWSAlgorithm[] = [];
  for (const raw of list) {
    const alg = raw.trim();
    if (alg === '' || alg.toLowerCase() === 'none' || /^HS\d+$/i.test(alg)) continue;
    if (!out.includes(alg)) out.push(alg);
  }
  return out;
}

function remoteResolver(url: string): KeyResolver {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('createJoseVerifier: invalid JWKS URL');
  }
  const set = createRemoteJWKSet(parsed);
  return async (header, token) => {
    try {
      return await set(header, token);
    } catch (e) {
      // Key-selection errors keep their meaning; fetch/network/HTTP failures mean "no keys" (fail closed).
      if (e instanceof joseErrors.JWKSNoMatchingKey || e instanceof joseErrors.JWKSMultipleMatchingKeys)
        throw e;
      throw unauthenticated('signing keys unavailable');
    }
  };
}

/**
 * Reads the JWKS file lazily on first use and again whenever its mtime/size/inode changes. A missing,
 * unreadable or invalid file rejects every token (fail closed) until it is fixed; the read is retried
 * on the next request.
 */
function fileResolver(path: string): KeyResolver {
  interface Loaded {
    readonly sig: string;
    readonly set: ReturnType<typeof createLocalJWKSet>;
  }
  let cached: Loaded | undefined;
  let loading: Promise<Loaded> | undefined;

  const signature = (s: { mtimeMs: number; size: number; ino: number }): string =>
    `${s.mtimeMs}:${s.size}:${s.ino}`;

  const load = async (): Promise<Loaded> => {
    const fh = await open(path, 'r').catch(() => {
      throw unauthenticated('signing keys unavailable');
    });
    try {
      const st = await fh.stat();
      if (!st.isFile() || st.size > MAX_JWKS_FILE_BYTES) throw unauthenticated('signing keys unavailable');
      const sig = signature(st);
      if (cached && cached.sig === sig) return cached;
      const text = await fh.readFile({ encoding: 'utf8' });
      let jwks: unknown;
      try {
        jwks = JSON.parse(text);
      } catch {
        throw unauthenticated('signing keys unavailable');
      }
      if (!isJwks(jwks)) throw unauthenticated('signing keys unavailable');
      let set: Loaded['set'];
      try {
        set = createLocalJWKSet(jwks);
      } catch {
        throw unauthenticated('signing keys unavailable');
      }
      cached = { sig, set };
      return cached;
    } catch (e) {
      throw isMuninnError(e) ? e : unauthenticated('signing keys unavailable');
    } finally {
      await fh.close().catch(() => undefined);
    }
  };

  // Every verification stats the file, synchronously: a stat of a local file is a few microseconds,
  // while the asynchronous one sent each request through the thread pool and back, a turn of a busy
  // event loop later (p99 36 ms of a refused write's 43 ms in the server, issue #11). A change to the
  // file is seen by the next verification.
  const current = async (): Promise<Loaded> => {
    let st;
    try {
      st = statSync(path);
    } catch {
      throw unauthenticated('signing keys unavailable');
    }
    if (cached && cached.sig === signature(st)) return cached;
    loading ??= load().finally(() => {
      loading = undefined;
    });
    return loading;
  };

  return async (header, token) => (await current()).set(header, token);
}

function isJwks(v: unknown): v is JSONWebKeySet {
  return (
    typeof v === 'object' &&
    v !== null &&
    Array.isArray((v as { keys?: unknown }).keys) &&
    (v as { keys: unknown[] }).keys.every((k) => typeof k === 'object' && k !== null && !Array.isArray(k))
  );
}

/** Maps any failure to a short, token-free UNAUTHENTICATED reason. */
function toUnauthenticated(e: unknown): MuninnError {
  if (isMuninnError(e)) return e.code === 'UNAUTHENTICATED' ? e : unauthenticated('invalid token');
  if (e instanceof joseErrors.JWTExpired) return unauthenticated('token expired');
  if (e instanceof joseErrors.JWTClaimValidationFailed) {
    const claim = /^[A-Za-z0-9_.:/-]{1,128}$/.test(e.claim) ? e.claim : 'claim';
    return unauthenticated(e.reason === 'missing' ? `missing claim: ${claim}` : `invalid claim: ${claim}`);
  }
  if (e instanceof joseErrors.JOSEAlgNotAllowed) return unauthenticated('algorithm not allowed');
  if (e instanceof joseErrors.JWSSignatureVerificationFailed) return unauthenticated('invalid signature');
  if (e instanceof joseErrors.JWKSNoMatchingKey) return unauthenticated('no matching signing key');
  if (e instanceof joseErrors.JWKSMultipleMatchingKeys) return unauthenticated('ambiguous signing key');
  if (e instanceof joseErrors.JWKSTimeout || e instanceof joseErrors.JWKSInvalid) {
    return unauthenticated('signing keys unavailable');
  }
  if (e instanceof joseErrors.JWSInvalid || e instanceof joseErrors.JWTInvalid)
    return unauthenticated('malformed token');
  if (e instanceof joseErrors.JOSENotSupported) return unauthenticated('unsupported token');
  // Remote JWKS fetch failures (network errors, non-200) and anything unexpected.
  if (e instanceof joseErrors.JOSEError) return unauthenticated('signing keys unavailable');
  return unauthenticated('invalid token');
}

function toPrincipal(payload: JWTPayload, opts: JoseVerifierOptions): Principal {
  const iss = payload.iss;
  if (typeof iss !== 'string' || iss !== opts.issuer) throw unauthenticated('invalid claim: iss');
  const sub = payload.sub;
  if (!isNonEmptyString(sub)) throw unauthenticated('invalid claim: sub');

  // Tenants are case-folded (TenantId): `ACME` and `acme` are one tenant.
  const tenant = TenantId.safeParse(payload[opts.tenantClaim]);
  if (!tenant.success) throw unauthenticated('invalid tenant claim');

  if (typeof payload.exp !== 'number') throw unauthenticated('missing claim: exp');
  if (opts.maxTokenTtlS !== undefined)
    checkLifetime(payload.exp, payload.iat, opts.maxTokenTtlS, opts.clockSkewS);

  const jti = payload.jti;
  if (jti !== undefined && !isNonEmptyString(jti)) throw unauthenticated('invalid claim: jti');

  const principal: Principal = {
    iss,
    sub,
    tenant: tenant.data,
    scopes: parseScopes(payload),
    actors: Object.freeze(parseActors(payload.act)),
    tokenId: jti,
    expiresAt: payload.exp,
  };
  return Object.freeze(principal);
}

/** Refuses a token that lives longer than `maxS` (see JoseVerifierOptions.maxTokenTtlS). */
function checkLifetime(exp: number, iat: number | undefined, maxS: number, skewS: number): void {
  const remaining = exp - Math.floor(Date.now() / 1000);
  if ((iat !== undefined && exp - iat > maxS) || remaining > maxS + skewS)
    throw unauthenticated(`token lifetime exceeds ${maxS} s`);
}

function isNonEmptyString(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= MAX_CLAIM_CHARS;
}

/** OAuth `scope` (space-separated string) and/or `scp` (array, or string as some IdPs send it). */
function parseScopes(payload: JWTPayload): ReadonlySet<Scope> {
  const words: string[] = [];
  const scope = payload['scope'];
  if (scope !== undefined) {
    if (typeof scope !== 'string') throw unauthenticated('invalid claim: scope');
    words.push(...scope.split(/\s+/));
  }
  const scp = payload['scp'];
  if (scp !== undefined) {
    if (typeof scp === 'string') words.push(...scp.split(/\s+/));
    else if (Array.isArray(scp) && scp.every((s): s is string => typeof s === 'string')) words.push(...scp);
    else throw unauthenticated('invalid claim: scp');
  }
  const out = new Set<Scope>();
  for (const w of words) if (KNOWN_SCOPES.has(w)) out.add(w as Scope);
  return out;
}

/** RFC 8693 `act`: outermost object is the current (most recent) actor; nested `act` are prior actors. */
function parseActors(act: unknown): Actor[] {
  const actors: Actor[] = [];
  let node = act;
  while (node !== undefined) {
    if (actors.length >= MAX_ACT_DEPTH) throw unauthenticated('invalid claim: act');
    if (typeof node !== 'object' || node === null || Array.isArray(node))
      throw unauthenticated('invalid claim: act');
    const { sub, iss, act: next } = node as Record<string, unknown>;
    if (!isNonEmptyString(sub)) throw unauthenticated('invalid claim: act');
    if (iss !== undefined && !isNonEmptyString(iss)) throw unauthenticated('invalid claim: act');
    actors.push(Object.freeze({ sub, iss }));
    node = next;
  }
  return actors;
}
