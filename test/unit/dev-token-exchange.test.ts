import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { devTokenExchange } from '../../src/adapters/auth/dev-token-exchange.ts';
import type { Principal } from '../../src/domain/principal.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'muninn-exchange-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const wall = (): number => Math.floor(Date.now() / 1000);

function exchangeWith(subject: Principal, now: () => number) {
  return devTokenExchange({
    stateDir: dir,
    issuer: 'muninn-dev',
    tenantClaim: 'tenant',
    subjectVerifier: { verify: async () => subject },
    targetAudience: 'urn:muninn:api',
    clientId: 'bridge',
    clientSecret: 'bridge-secret',
    now,
  });
}

const form = (): URLSearchParams =>
  new URLSearchParams({
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token: 'opaque',
    subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
  });
const basic = `Basic ${Buffer.from('bridge:bridge-secret').toString('base64')}`;

describe('dev token exchange', () => {
  it('the exchanged token expires no later than its subject, whatever the clock reads between TTL and signature', async () => {
    const issuedAt = wall() - 7; // a clock that differs from the signer's wall clock by whole seconds
    const subject: Principal = {
      iss: 'muninn-dev',
      sub: 'alice',
      tenant: 'acme',
      scopes: new Set(['read'] as const),
      actors: [],
      tokenId: undefined,
      expiresAt: issuedAt + 60,
    };
    const answer = await exchangeWith(subject, () => issuedAt)(form(), basic);
    expect(answer.status).toBe(200);
    const claims = decodeJwt((answer.body as { access_token: string }).access_token);
    expect(claims.exp).toBe(subject.expiresAt);
    expect(claims.iat).toBe(issuedAt);
    expect((answer.body as { expires_in: number }).expires_in).toBe(60);
  });
});
