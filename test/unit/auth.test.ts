import { mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { createPublicKey } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { createJoseVerifier, type JoseVerifierOptions } from '../../src/adapters/auth/jose-verifier.ts';
import { ensureDevKeys, parseTtl, signDevToken } from '../../src/adapters/auth/dev-keys.ts';
import type { TokenVerifier } from '../../src/ports/token-verifier.ts';

const ISS = 'https://idp.example.test/';
const AUD = 'urn:muninn:api';
const SKEW = 30;

let dir: string;
let jwksPath: string;
let es: { privateKey: CryptoKey; publicKey: CryptoKey };
let rs: { privateKey: CryptoKey; publicKey: CryptoKey };
let other: { privateKey: CryptoKey; publicKey: CryptoKey };
let esPublicJwk: JWK;
let verifier: TokenVerifier;

const now = (): number => Math.floor(Date.now() / 1000);
const b64url = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');

function opts(over: Partial<JoseVerifierOptions> = {}): JoseVerifierOptions {
  return {
    jwks: { kind: 'file', path: jwksPath },
    issuer: ISS,
    audience: AUD,
    algorithms: ['ES256', 'RS256', 'EdDSA'],
    clockSkewS: SKEW,
    tenantClaim: 'tenant',
    ...over,
  };
}

interface MintOptions {
  key?: CryptoKey | Uint8Array;
  alg?: string;
  kid?: string | null;
  claims?: Record<string, unknown>;
  omit?: readonly string[];
}

async function mint(o: MintOptions = {}): Promise<string> {
  const alg = o.alg ?? 'ES256';
  const kid = o.kid === undefined ? (alg === 'RS256' ? 'rs-1' : 'es-1') : o.kid;
  const t = now();
  const base: Record<string, unknown> = {
    iss: ISS,
    aud: AUD,
    sub: 'user-42',
    tenant: 'acme',
    scope: 'read write bogus',
    iat: t,
    exp: t + 600,
    jti: 'tok-1',
    ...o.claims,
  };
  for (const k of o.omit ?? []) delete base[k];
  const header = kid === null ? { alg } : { alg, kid };
  return new SignJWT(base)
    .setProtectedHeader(header)
    .sign(o.key ?? (alg === 'RS256' ? rs.privateKey : es.privateKey));
}

async function expectUnauth(p: Promise<unknown>, token?: string): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected verification to fail').toBeDefined();
  expect((err as { code?: string }).code).toBe('UNAUTHENTICATED');
  if (token) expect(String((err as Error).message)).not.toContain(token);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'muninn-auth-'));
  jwksPath = join(dir, 'jwks.json');
  es = await generateKeyPair('ES256');
  rs = await generateKeyPair('RS256');
  other = await generateKeyPair('ES256');
  esPublicJwk = { ...(await exportJWK(es.publicKey)), kid: 'es-1', alg: 'ES256', use: 'sig' };
  const rsJwk = { ...(await exportJWK(rs.publicKey)), kid: 'rs-1', alg: 'RS256', use: 'sig' };
  await writeFile(jwksPath, JSON.stringify({ keys: [esPublicJwk, rsJwk] }));
  verifier = createJoseVerifier(opts());
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('createJoseVerifier: accepted tokens', () => {
  it('maps a valid ES256 token to a Principal (unknown scope dropped)', async () => {
    const token = await mint();
    const p = await verifier.verify(token);
    expect(p.iss).toBe(ISS);
    expect(p.sub).toBe('user-42');
    expect(p.tenant).toBe('acme');
    expect([...p.scopes].sort()).toEqual(['read', 'write']);
    expect(p.actors).toEqual([]);
    expect(p.tokenId).toBe('tok-1');
    expect(typeof p.expiresAt).toBe('number');
    expect(p.expiresAt).toBeGreaterThan(now());
  });

  it('accepts a valid RS256 token, with scopes from `scp`', async () => {
    const token = await mint({
      alg: 'RS256',
      omit: ['scope'],
      claims: { scp: ['admin', 'nope', 'handoff'] },
    });
    const p = await verifier.verify(token);
    expect(p.sub).toBe('user-42');
    expect([...p.scopes].sort()).toEqual(['admin', 'handoff']);
  });

  it('parses a 2-level act chain, most recent actor first', async () => {
    const token = await mint({
      claims: { act: { sub: 'agent-b', iss: 'https://agents.test', act: { sub: 'agent-a' } } },
    });
    const p = await verifier.verify(token);
    expect(p.actors).toEqual([
      { sub: 'agent-b', iss: 'https://agents.test' },
      { sub: 'agent-a', iss: undefined },
    ]);
  });

  it('accepts a token whose nbf is in the future but within the clock skew', async () => {
    const token = await mint({ claims: { nbf: now() + SKEW - 10 } });
    await expect(verifier.verify(token)).resolves.toMatchObject({ sub: 'user-42' });
  });

  it('treats jti as optional', async () => {
    const p = await verifier.verify(await mint({ omit: ['jti'] }));
    expect(p.tokenId).toBeUndefined();
  });

  it('re-reads the JWKS file when it changes', async () => {
    const d = await mkdtemp(join(tmpdir(), 'muninn-auth-rot-'));
    try {
      const path = join(d, 'jwks.json');
      await writeFile(path, JSON.stringify({ keys: [esPublicJwk] }));
      const v = createJoseVerifier(opts({ jwks: { kind: 'file', path } }));
      await expect(v.verify(await mint())).resolves.toBeDefined();
      const otherJwk = { ...(await exportJWK(other.publicKey)), kid: 'es-2', alg: 'ES256', use: 'sig' };
      await writeFile(path, JSON.stringify({ keys: [otherJwk] }));
      const later = new Date(Date.now() + 5000);
      await utimes(path, later, later);
      await expect(v.verify(await mint({ key: other.privateKey, kid: 'es-2' }))).resolves.toBeDefined();
      await expectUnauth(v.verify(await mint()));
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });
});

describe('createJoseVerifier: a token already checked', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('is not checked again: its second use runs no signature verification, and gives the same principal', async () => {
    const v = createJoseVerifier(opts());
    const token = await mint();
    const verify = vi.spyOn(crypto.subtle, 'verify');
    const first = await v.verify(token);
    expect(verify).toHaveBeenCalledTimes(1);
    expect(await v.verify(token)).toBe(first);
    expect(verify).toHaveBeenCalledTimes(1);
  });

  it('is checked again without waiting for a turn of the event loop (the key file is stat-ed in place)', async () => {
    const v = createJoseVerifier(opts());
    const token = await mint();
    await v.verify(token);
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    await expect(v.verify(token)).resolves.toMatchObject({ sub: 'user-42' });
    expect(turned).toBe(false);
  });

  it('is refused once it expires', async () => {
    const v = createJoseVerifier(opts({ clockSkewS: 0 }));
    const token = await mint({ claims: { exp: now() + 2 } });
    await expect(v.verify(token)).resolves.toBeDefined();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 5_000);
    await expectUnauth(v.verify(token), token);
  });

  it('is refused when the JWKS no longer holds its key (the same token string, after a rotation)', async () => {
    const d = await mkdtemp(join(tmpdir(), 'muninn-auth-cache-'));
    try {
      const path = join(d, 'jwks.json');
      await writeFile(path, JSON.stringify({ keys: [esPublicJwk] }));
      const v = createJoseVerifier(opts({ jwks: { kind: 'file', path } }));
      const token = await mint();
      await expect(v.verify(token)).resolves.toBeDefined();
      const otherJwk = { ...(await exportJWK(other.publicKey)), kid: 'es-1', alg: 'ES256', use: 'sig' };
      await writeFile(path, JSON.stringify({ keys: [otherJwk] }));
      const later = new Date(Date.now() + 5000);
      await utimes(path, later, later);
      await expectUnauth(v.verify(token), token);
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });

  it('does not vouch for a token that differs from it in one character of the signature', async () => {
    const v = createJoseVerifier(opts());
    const token = await mint();
    await expect(v.verify(token)).resolves.toBeDefined();
    const [h, p, sig] = token.split('.') as [string, string, string];
    const i = Math.floor(sig.length / 2);
    const forged = `${h}.${p}.${sig.slice(0, i)}${sig[i] === 'A' ? 'B' : 'A'}${sig.slice(i + 1)}`;
    await expectUnauth(v.verify(forged), forged);
  });
});

describe('createJoseVerifier: rejected tokens are UNAUTHENTICATED', () => {
  it('no token / empty string', async () => {
    await expectUnauth(verifier.verify(''));
    await expectUnauth(verifier.verify(undefined as unknown as string));
  });

  it('garbage string', async () => {
    await expectUnauth(verifier.verify('not-a-jwt'));
    await expectUnauth(verifier.verify('a.b.c'));
    await expectUnauth(verifier.verify('Bearer x.y.z'));
    await expectUnauth(verifier.verify('x'.repeat(100_000)));
  });

  it('expired', async () => {
    const token = await mint({ claims: { iat: now() - 3600, exp: now() - SKEW - 60 } });
    await expectUnauth(verifier.verify(token), token);
  });

  it('nbf in the future beyond the skew', async () => {
    const token = await mint({ claims: { nbf: now() + SKEW + 120 } });
    await expectUnauth(verifier.verify(token), token);
  });

  it('missing exp', async () => {
    await expectUnauth(verifier.verify(await mint({ omit: ['exp'] })));
  });

  it('wrong audience', async () => {
    const token = await mint({ claims: { aud: 'urn:someone:else' } });
    await expectUnauth(verifier.verify(token), token);
    await expectUnauth(verifier.verify(await mint({ omit: ['aud'] })));
  });

  it('wrong issuer', async () => {
    await expectUnauth(verifier.verify(await mint({ claims: { iss: 'https://evil.test/' } })));
    await expectUnauth(verifier.verify(await mint({ claims: { iss: ISS.slice(0, -1) } })));
    await expectUnauth(verifier.verify(await mint({ omit: ['iss'] })));
  });

  it('alg none (unsigned, hand-crafted)', async () => {
    const t = now();
    const payload = { iss: ISS, aud: AUD, sub: 'user-42', tenant: 'acme', scope: 'admin', exp: t + 600 };
    const unsigned = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(payload)}.`;
    await expectUnauth(verifier.verify(unsigned), unsigned);
    const withKid = `${b64url({ alg: 'none', kid: 'es-1' })}.${b64url(payload)}.`;
    await expectUnauth(verifier.verify(withKid));
    // Even if someone lists it in config.
    const lax = createJoseVerifier(opts({ algorithms: ['ES256', 'none'] }));
    await expectUnauth(lax.verify(unsigned));
  });

  it('signed by a different key (same kid)', async () => {
    const token = await mint({ key: other.privateKey, kid: 'es-1' });
    await expectUnauth(verifier.verify(token), token);
  });

  it('HS256 signed with the public key (PEM, JWK JSON, raw DER) as the HMAC secret', async () => {
    const pem = await exportSPKI(es.publicKey);
    const der = createPublicKey(pem).export({ type: 'spki', format: 'der' });
    const secrets = [
      new TextEncoder().encode(pem),
      new TextEncoder().encode(JSON.stringify(esPublicJwk)),
      new Uint8Array(der),
    ];
    // HS256 is refused even when the configuration lists it.
    const lax = createJoseVerifier(opts({ algorithms: ['ES256', 'RS256', 'HS256'] }));
    for (const secret of secrets) {
      for (const kid of ['es-1', null] as const) {
        const token = await mint({ alg: 'HS256', key: secret, kid });
        await expectUnauth(verifier.verify(token), token);
        await expectUnauth(lax.verify(token), token);
      }
    }
  });

  it('algorithm allowed by the key but not by config', async () => {
    const esOnly = createJoseVerifier(opts({ algorithms: ['ES256'] }));
    await expectUnauth(esOnly.verify(await mint({ alg: 'RS256' })));
  });

  it('kid pointing to a key not in the JWKS', async () => {
    await expectUnauth(verifier.verify(await mint({ kid: 'unknown-kid' })));
  });

  it('missing tenant claim, or an invalid tenant id', async () => {
    await expectUnauth(verifier.verify(await mint({ omit: ['tenant'] })));
    await expectUnauth(verifier.verify(await mint({ claims: { tenant: '' } })));
    await expectUnauth(verifier.verify(await mint({ claims: { tenant: '../etc' } })));
    await expectUnauth(verifier.verify(await mint({ claims: { tenant: 'a'.repeat(64) } })));
    await expectUnauth(verifier.verify(await mint({ claims: { tenant: 42 } })));
  });

  it('uses the configured tenant claim name', async () => {
    const custom = createJoseVerifier(opts({ tenantClaim: 'https://muninn.test/tenant' }));
    await expectUnauth(custom.verify(await mint()));
    const p = await custom.verify(await mint({ claims: { 'https://muninn.test/tenant': 'globex' } }));
    expect(p.tenant).toBe('globex');
  });

  it('missing sub', async () => {
    await expectUnauth(verifier.verify(await mint({ omit: ['sub'] })));
    await expectUnauth(verifier.verify(await mint({ claims: { sub: '' } })));
  });

  it.each([
    ['a string', 'agent-a'],
    ['an array', [{ sub: 'agent-a' }]],
    ['null', null],
    ['an object without sub', { iss: 'https://agents.test' }],
    ['an empty sub', { sub: '' }],
    ['a non-string iss', { sub: 'agent-a', iss: 7 }],
    ['a malformed nested act', { sub: 'agent-b', act: { sub: 'agent-a', act: 5 } }],
  ])('malformed act: %s', async (_label, act) => {
    await expectUnauth(verifier.verify(await mint({ claims: { act } })));
  });

  it('malformed scope claims', async () => {
    await expectUnauth(verifier.verify(await mint({ claims: { scope: ['read'] } })));
    await expectUnauth(verifier.verify(await mint({ claims: { scp: [1, 2] } })));
  });

  it('a missing JWKS file (fail closed, no crash)', async () => {
    const v = createJoseVerifier(opts({ jwks: { kind: 'file', path: join(dir, 'does-not-exist.json') } }));
    await expectUnauth(v.verify(await mint()));
  });

  it('an invalid JWKS file', async () => {
    const path = join(dir, 'broken.json');
    await writeFile(path, '{"keys": nope');
    const v = createJoseVerifier(opts({ jwks: { kind: 'file', path } }));
    await expectUnauth(v.verify(await mint()));
    await writeFile(path, '{"not":"a jwks"}');
    await expectUnauth(v.verify(await mint()));
  });

  it('an unreachable JWKS URL', async () => {
    const v = createJoseVerifier(opts({ jwks: { kind: 'url', url: 'http://127.0.0.1:1/jwks.json' } }));
    await expect(v.verify(await mint())).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
      message: 'signing keys unavailable',
    });
  });
});

describe('createJoseVerifier: requireScope', () => {
  it('FORBIDDEN when a valid token lacks the scope; admin does not imply handoff', async () => {
    const v = createJoseVerifier(opts({ requireScope: 'handoff' }));
    const err = await v.verify(await mint({ claims: { scope: 'admin read' } })).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('FORBIDDEN');
    await expect(v.verify(await mint({ claims: { scope: 'handoff' } }))).resolves.toBeDefined();
  });

  it('admin implies write', async () => {
    const v = createJoseVerifier(opts({ requireScope: 'write' }));
    await expect(v.verify(await mint({ claims: { scope: 'admin' } }))).resolves.toBeDefined();
  });

  it('an invalid token is still UNAUTHENTICATED, not FORBIDDEN', async () => {
    const v = createJoseVerifier(opts({ requireScope: 'handoff' }));
    await expectUnauth(v.verify(await mint({ claims: { aud: 'x' } })));
  });
});

describe('createJoseVerifier: configuration', () => {
  it('refuses a configuration with only none/HS algorithms', () => {
    expect(() => createJoseVerifier(opts({ algorithms: ['none', 'HS256'] }))).toThrow();
  });
});

describe('dev keys', () => {
  it('creates the key once and reuses it; private key is 0600, dir 0700', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'muninn-dev-'));
    try {
      const a = await ensureDevKeys(stateDir);
      const b = await ensureDevKeys(stateDir);
      expect(b.kid).toBe(a.kid);
      expect(b.privateJwk.d).toBe(a.privateJwk.d);
      expect(a.jwksPath).toBe(join(stateDir, 'dev-keys', 'jwks.json'));
      if (process.platform !== 'win32') {
        expect((await stat(join(stateDir, 'dev-keys', 'private.jwk.json'))).mode & 0o777).toBe(0o600);
        expect((await stat(join(stateDir, 'dev-keys'))).mode & 0o777).toBe(0o700);
      }
      const jwks = JSON.parse(await readFile(a.jwksPath, 'utf8')) as { keys: JWK[] };
      expect(jwks.keys).toHaveLength(1);
      expect(jwks.keys[0]).toMatchObject({ kid: a.kid, alg: 'ES256', use: 'sig', kty: 'EC', crv: 'P-256' });
      expect(jwks.keys[0]?.d).toBeUndefined();
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it('concurrent first use agrees on one key', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'muninn-dev-'));
    try {
      const all = await Promise.all([
        ensureDevKeys(stateDir),
        ensureDevKeys(stateDir),
        ensureDevKeys(stateDir),
      ]);
      expect(new Set(all.map((k) => k.kid)).size).toBe(1);
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it('signDevToken produces a token the jose verifier accepts', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'muninn-dev-'));
    try {
      const token = await signDevToken({
        stateDir,
        issuer: 'muninn-dev',
        audience: AUD,
        tenant: 'acme',
        sub: 'dev-user',
        scopes: ['read', 'write', 'frobnicate'],
        ttlSeconds: 600,
        act: { sub: 'agent-2', act: { sub: 'agent-1', iss: 'muninn-dev' } },
        jti: 'dev-jti-1',
      });
      const { jwksPath: devJwks } = await ensureDevKeys(stateDir);
      const v = createJoseVerifier({
        jwks: { kind: 'file', path: devJwks },
        issuer: 'muninn-dev',
        audience: AUD,
        algorithms: ['ES256'],
        clockSkewS: 5,
        tenantClaim: 'tenant',
      });
      const p = await v.verify(token);
      expect(p).toMatchObject({ iss: 'muninn-dev', sub: 'dev-user', tenant: 'acme', tokenId: 'dev-jti-1' });
      expect([...p.scopes].sort()).toEqual(['read', 'write']);
      expect(p.actors).toEqual([
        { sub: 'agent-2', iss: undefined },
        { sub: 'agent-1', iss: 'muninn-dev' },
      ]);
      expect(p.expiresAt! - now()).toBeGreaterThan(590);

      const custom = await signDevToken({
        stateDir,
        issuer: 'muninn-dev',
        audience: AUD,
        tenant: 'globex',
        sub: 'dev-user',
        scopes: [],
        ttlSeconds: 60,
        tenantClaim: 'org',
      });
      const vOrg = createJoseVerifier({
        jwks: { kind: 'file', path: devJwks },
        issuer: 'muninn-dev',
        audience: AUD,
        algorithms: ['ES256'],
        clockSkewS: 5,
        tenantClaim: 'org',
      });
      expect((await vOrg.verify(custom)).tenant).toBe('globex');
      await expectUnauth(v.verify(custom));
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it('signDevToken rejects bad input', async () => {
    const base = {
      stateDir: dir,
      issuer: 'i',
      audience: 'a',
      tenant: 'acme',
      sub: 's',
      scopes: [],
      ttlSeconds: 60,
    };
    await expect(signDevToken({ ...base, ttlSeconds: 0 })).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    await expect(signDevToken({ ...base, tenant: 'no/slash' })).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
    });
  });
});

describe('parseTtl', () => {
  it.each([
    ['1h', 3600],
    ['30m', 1800],
    ['90s', 90],
    ['2d', 172_800],
    ['3600', 3600],
    [' 15m ', 900],
  ])('%s → %i seconds', (input, seconds) => {
    expect(parseTtl(input)).toBe(seconds);
  });

  it.each(['', 'abc', '1x', '-5', '1.5h', 'h', '0', '0s', '1h30m', '1 h', '99999999999999d'])(
    'rejects %j with BAD_USER_INPUT',
    (input) => {
      expect(() => parseTtl(input)).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
    },
  );
});
