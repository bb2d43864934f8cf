import { randomBytes, randomUUID } from 'node:crypto';
import { chmod, link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { badInput } from '../../domain/errors.ts';
import { TenantId } from '../../domain/model.ts';

/**
 * Development-only signing key: one ES256 pair under `${stateDir}/dev-keys/`, created on first use and
 * reused afterwards. The public half is published as `jwks.json` (the default MUNINN_AUTH_JWKS_FILE);
 * production refuses this key (see config).
 */
const ALG = 'ES256';
const DIR = 'dev-keys';
const PRIVATE_FILE = 'private.jwk.json';
const JWKS_FILE = 'jwks.json';

export interface DevKeys {
  readonly privateJwk: JWK;
  readonly jwksPath: string;
  readonly kid: string;
}

/** One hop of an RFC 8693 `act` chain; `act` nests the prior actor. */
export interface DevActClaim {
  readonly sub: string;
  readonly iss?: string;
  readonly act?: DevActClaim;
}

export interface SignDevTokenOptions {
  readonly stateDir: string;
  readonly issuer: string;
  readonly audience: string;
  readonly tenant: string;
  readonly sub: string;
  readonly scopes: readonly string[];
  readonly ttlSeconds: number;
  readonly act?: DevActClaim;
  /** RFC 9068 `client_id`: the OAuth client the token was issued to (the MCP bridge, for exchanged tokens). */
  readonly clientId?: string;
  /** Defaults to `tenant`. */
  readonly tenantClaim?: string;
  /** Defaults to a random UUID. */
  readonly jti?: string;
  /**
   * The issue time in epoch seconds (defaults to the clock). A caller that derived `ttlSeconds` from an
   * absolute deadline passes the same instant, so `exp` is that deadline and not a tick later.
   */
  readonly issuedAt?: number;
}

export async function ensureDevKeys(stateDir: string): Promise<DevKeys> {
  const dir = join(stateDir, DIR);
  const privatePath = join(dir, PRIVATE_FILE);
  const jwksPath = join(dir, JWKS_FILE);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);

  let privateJwk = await readPrivate(privatePath);
  if (!privateJwk) {
    const generated = await generate();
    // Publish exclusively (link fails with EEXIST) so two concurrent first uses agree on one key.
    const tmp = `${privatePath}.${process.pid}.${randomUUID()}.tmp`;
    await writeFile(tmp, `${JSON.stringify(generated, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    try {
      await link(tmp, privatePath);
      privateJwk = generated;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      privateJwk = await readPrivate(privatePath);
      if (!privateJwk) throw new Error(`dev signing key at ${privatePath} is unreadable`);
    } finally {
      await unlink(tmp).catch(() => undefined);
    }
  } else {
    await chmod(privatePath, 0o600);
  }

  const kid = privateJwk.kid;
  if (!kid) throw new Error(`dev signing key at ${privatePath} has no kid`);
  const publicJwk = toPublic(privateJwk);
  if (!(await jwksHolds(jwksPath, publicJwk))) {
    const tmp = `${jwksPath}.${process.pid}.${randomUUID()}.tmp`;
    await writeFile(tmp, `${JSON.stringify({ keys: [publicJwk] }, null, 2)}\n`, { mode: 0o644, flag: 'wx' });
    await rename(tmp, jwksPath);
  }
  return { privateJwk, jwksPath, kid };
}

const FINGERPRINT_FILE = 'fingerprint.key';

/**
 * Development-only HMAC key of secret fingerprints (what MUNINN_FINGERPRINT_KEY is in production): 32
 * random bytes under `${stateDir}/dev-keys/`, created on first use and reused, so that the same secret keeps
 * the same ref across restarts. Published exclusively, like the signing key, so concurrent first uses agree.
 */
export async function ensureDevFingerprintKey(stateDir: string): Promise<string> {
  return ensureDevSecret(stateDir, FINGERPRINT_FILE, 'fingerprint key');
}

/**
 * A development secret persisted under the state dir (created once, 0600, the same for every process
 * sharing the dir; a race between two first starts is settled by link(2)). Production passes its own.
 */
export async function ensureDevSecret(stateDir: string, file: string, what: string): Promise<string> {
  const dir = join(stateDir, DIR);
  const path = join(dir, file);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const existing = await readFile(path, 'utf8').catch(() => undefined);
  if (existing && existing.trim().length >= 32) return existing.trim();
  const tmp = `${path}.${process.pid}.${randomUUID()}.tmp`;
  await writeFile(tmp, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(tmp, path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
  const key = (await readFile(path, 'utf8')).trim();
  if (key.length < 32) throw new Error(`dev ${what} at ${path} is unreadable`);
  return key;
}

export async function signDevToken(opts: SignDevTokenOptions): Promise<string> {
  if (!Number.isSafeInteger(opts.ttlSeconds) || opts.ttlSeconds <= 0) {
    throw badInput('ttlSeconds must be a positive integer');
  }
  // The claim keeps the caller's spelling; the verifier folds it (TenantId).
  if (!TenantId.safeParse(opts.tenant).success) throw badInput('invalid tenant id');
  if (!opts.sub) throw badInput('sub is required');
  const tenantClaim = opts.tenantClaim ?? 'tenant';
  const { privateJwk, kid } = await ensureDevKeys(opts.stateDir);
  const key = await importJWK(privateJwk, ALG);

  const claims: Record<string, unknown> = { [tenantClaim]: opts.tenant };
  if (opts.scopes.length > 0) claims['scope'] = opts.scopes.join(' ');
  if (opts.act) claims['act'] = actToJson(opts.act);
  if (opts.clientId) claims['client_id'] = opts.clientId;

  const now = opts.issuedAt ?? Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: ALG, kid, typ: 'JWT' })
    .setIssuer(opts.issuer)
    .setAudience(opts.audience)
    .setSubject(opts.sub)
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + opts.ttlSeconds)
    .setJti(opts.jti ?? randomUUID())
    .sign(key);
}

const UNIT_SECONDS: Readonly<Record<string, number>> = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 };

/** `'90s' | '30m' | '1h' | '2d' | '3600'` → seconds. Throws BAD_USER_INPUT otherwise. */
export function parseTtl(input: string): number {
  const m = /^(\d{1,12})([smhd]?)$/.exec(typeof input === 'string' ? input.trim() : '');
  const n = m?.[1];
  const unit = UNIT_SECONDS[m?.[2] ?? ''];
  if (!m || n === undefined || unit === undefined) {
    throw badInput('invalid TTL: use a positive number of seconds or a number with s, m, h or d (e.g. 1h)');
  }
  const seconds = Number(n) * unit;
  if (seconds <= 0 || !Number.isSafeInteger(seconds)) throw badInput('invalid TTL: must be positive');
  return seconds;
}

function actToJson(act: DevActClaim): Record<string, unknown> {
  const out: Record<string, unknown> = { sub: act.sub };
  if (act.iss !== undefined) out['iss'] = act.iss;
  if (act.act !== undefined) out['act'] = actToJson(act.act);
  return out;
}

async function generate(): Promise<JWK> {
  const { privateKey } = await generateKeyPair(ALG, { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk, 'sha256');
  return { ...jwk, kid, alg: ALG, use: 'sig' };
}

function toPublic(jwk: JWK): JWK {
  const { kty, crv, x, y, kid } = jwk;
  return { kty, crv, x, y, kid, alg: ALG, use: 'sig' };
}

async function readPrivate(path: string): Promise<JWK | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  const jwk = JSON.parse(text) as JWK;
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || !jwk.d || !jwk.x || !jwk.y || !jwk.kid) {
    throw new Error(`dev signing key at ${path} is not an ES256 private JWK`);
  }
  return jwk;
}

async function jwksHolds(path: string, publicJwk: JWK): Promise<boolean> {
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as { keys?: unknown };
    if (!Array.isArray(parsed.keys) || parsed.keys.length !== 1) return false;
    const k = parsed.keys[0] as JWK;
    return k.kid === publicJwk.kid && k.x === publicJwk.x && k.y === publicJwk.y && k.d === undefined;
  } catch {
    return false;
  }
}
