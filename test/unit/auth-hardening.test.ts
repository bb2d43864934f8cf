import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { createJoseVerifier, type JoseVerifierOptions } from '../../src/adapters/auth/jose-verifier.ts';
import { createLogger } from '../../src/adapters/logger.ts';
import { authenticate, claimedIdentity } from '../../src/api/context.ts';
import type { TokenVerifier } from '../../src/ports/token-verifier.ts';

/**
 * Issue #9 (transport and tokens): the maximum token lifetime, tenant case folding in the verifier, and
 * the log line of a failed authentication (never the token).
 */

const ISS = 'https://idp.example.test/';
const AUD = 'urn:muninn:api';
const SKEW = 30;
const MAX_TTL = 3600;

let dir: string;
let key: { privateKey: CryptoKey; publicKey: CryptoKey };
let other: { privateKey: CryptoKey; publicKey: CryptoKey };
let verifier: TokenVerifier;

const now = (): number => Math.floor(Date.now() / 1000);

function opts(over: Partial<JoseVerifierOptions> = {}): JoseVerifierOptions {
  return {
    jwks: { kind: 'file', path: join(dir, 'jwks.json') },
    issuer: ISS,
    audience: AUD,
    algorithms: ['ES256'],
    clockSkewS: SKEW,
    tenantClaim: 'tenant',
    maxTokenTtlS: MAX_TTL,
    ...over,
  };
}

async function mint(claims: Record<string, unknown>, omit: string[] = [], signer = key.privateKey) {
  const t = now();
  const body: Record<string, unknown> = {
    iss: ISS,
    aud: AUD,
    sub: 'user-42',
    tenant: 'acme',
    scope: 'read',
    iat: t,
    exp: t + 600,
    ...claims,
  };
  for (const k of omit) delete body[k];
  return new SignJWT(body).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).sign(signer);
}

async function failure(p: Promise<unknown>): Promise<{ code?: string; message: string }> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e, 'expected a rejection').toBeDefined();
  return e as { code?: string; message: string };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'muninn-auth-hardening-'));
  key = await generateKeyPair('ES256');
  other = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(key.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  await writeFile(join(dir, 'jwks.json'), JSON.stringify({ keys: [jwk] }));
  verifier = createJoseVerifier(opts());
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('maximum token lifetime (MUNINN_MAX_TOKEN_TTL_S)', () => {
  it('accepts a token whose exp − iat is exactly the maximum', async () => {
    const t = now();
    await expect(verifier.verify(await mint({ iat: t, exp: t + MAX_TTL }))).resolves.toMatchObject({
      sub: 'user-42',
    });
  });

  it('refuses exp − iat one second over the maximum with UNAUTHENTICATED', async () => {
    const t = now();
    const e = await failure(verifier.verify(await mint({ iat: t, exp: t + MAX_TTL + 1 })));
    expect(e.code).toBe('UNAUTHENTICATED');
    expect(e.message).toBe(`token lifetime exceeds ${MAX_TTL} s`);
  });

  it('refuses a year-long token, and accepts it where no maximum is configured (control)', async () => {
    const t = now();
    const year = await mint({ iat: t, exp: t + 365 * 86_400 });
    expect((await failure(verifier.verify(year))).code).toBe('UNAUTHENTICATED');
    const unbounded = createJoseVerifier(opts({ maxTokenTtlS: undefined }));
    await expect(unbounded.verify(year)).resolves.toMatchObject({ sub: 'user-42' });
  });

  it('without iat, judges exp − now (within the clock skew)', async () => {
    const t = now();
    await expect(verifier.verify(await mint({ exp: t + MAX_TTL }, ['iat']))).resolves.toBeDefined();
    const long = await mint({ exp: t + MAX_TTL + SKEW + 60 }, ['iat']);
    expect(await failure(verifier.verify(long))).toMatchObject({
      code: 'UNAUTHENTICATED',
      message: `token lifetime exceeds ${MAX_TTL} s`,
    });
  });

  it('refuses a short-lived token dated into the future (iat far ahead, exp − now too long)', async () => {
    const later = now() + 30 * 86_400;
    const e = await failure(verifier.verify(await mint({ iat: later, exp: later + 60 })));
    expect(e).toMatchObject({ code: 'UNAUTHENTICATED', message: `token lifetime exceeds ${MAX_TTL} s` });
  });

  it('refuses a token without exp', async () => {
    const e = await failure(verifier.verify(await mint({}, ['exp'])));
    expect(e.code).toBe('UNAUTHENTICATED');
  });
});

describe('tenant case folding', () => {
  it.each([
    ['ACME', 'acme'],
    ['Acme.Corp', 'acme.corp'],
    ['acme', 'acme'],
  ])('a token with tenant %s is tenant %s', async (claim, tenant) => {
    expect((await verifier.verify(await mint({ tenant: claim }))).tenant).toBe(tenant);
  });
});

describe('failed authentications are logged, never with the token', () => {
  function capture() {
    const lines: Array<Record<string, unknown>> = [];
    const raw: string[] = [];
    const stream = new PassThrough();
    stream.on('data', (b: Buffer) => {
      for (const line of b.toString().split('\n').filter(Boolean)) {
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      }
    });
    return { log: createLogger('info', 'muninn', stream), lines, raw };
  }
  const settle = () => new Promise((r) => setImmediate(r));

  it('a token signed by another key: reason, claimed iss/sub and remote address; no token', async () => {
    const c = capture();
    const token = await mint({ sub: 'mallory' }, [], other.privateKey);
    const e = await failure(
      authenticate(verifier, `Bearer ${token}`, { log: c.log, transport: 'http', remote: '10.1.2.3' }),
    );
    expect(e.message).toBe('invalid signature');
    await settle();
    expect(c.lines).toHaveLength(1);
    expect(c.lines[0]).toMatchObject({
      level: 40,
      msg: 'authentication failed',
      event: 'auth_failed',
      transport: 'http',
      code: 'UNAUTHENTICATED',
      reason: 'invalid signature',
      remote: '10.1.2.3',
      claimed: { iss: ISS, sub: 'mallory' },
    });
    const [, payload, signature] = token.split('.');
    for (const part of [token, payload!, signature!]) expect(c.raw.join('\n')).not.toContain(part);
  });

  it('an expired token and a missing token are logged with their reasons', async () => {
    const c = capture();
    const t = now();
    const expired = await mint({ iat: t - 7200, exp: t - 3600 });
    await failure(
      authenticate(verifier, `Bearer ${expired}`, { log: c.log, transport: 'ws', remote: '::1' }),
    );
    await failure(authenticate(verifier, undefined, { log: c.log, transport: 'ws', remote: '::1' }));
    await failure(
      authenticate(verifier, 'Basic dXNlcjpwdw==', { log: c.log, transport: 'ws', remote: '::1' }),
    );
    await settle();
    expect(c.lines.map((l) => [l['transport'], l['reason']])).toEqual([
      ['ws', 'token expired'],
      ['ws', 'no bearer token'],
      ['ws', 'not a bearer token'],
    ]);
    expect(c.raw.join('\n')).not.toContain(expired.split('.')[2]!);
    expect(c.raw.join('\n')).not.toContain('dXNlcjpwdw==');
  });

  it('a successful authentication logs nothing', async () => {
    const c = capture();
    await authenticate(verifier, `Bearer ${await mint({})}`, {
      log: c.log,
      transport: 'http',
      remote: '::1',
    });
    await settle();
    expect(c.lines).toEqual([]);
  });

  it('claimedIdentity reads iss/sub without verifying, and tolerates garbage', () => {
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    expect(claimedIdentity(`${b64({ alg: 'none' })}.${b64({ iss: 'i', sub: 's', x: 1 })}.`)).toEqual({
      iss: 'i',
      sub: 's',
    });
    expect(claimedIdentity('not-a-jwt')).toEqual({});
    expect(claimedIdentity('a.%%%.c')).toEqual({});
    expect(claimedIdentity(`x.${b64({ sub: 'z'.repeat(5000) })}.y`).sub).toHaveLength(200);
  });
});
