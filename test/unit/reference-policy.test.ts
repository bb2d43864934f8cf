import { describe, expect, it } from 'vitest';
import type { GrantState } from '../../src/domain/fold.ts';
import type { Principal, Scope } from '../../src/domain/principal.ts';
import { referencePolicy } from '../../src/domain/reference-policy.ts';

/**
 * Policy.writeAccess: a write that also reads (propose, an episode) checks the write and takes its read
 * scope from one read of the grant source, and answers exactly as checkWrite then readScope would.
 */
const principal = (scopes: Scope[], actors: string[] = []): Principal => ({
  iss: 'iss',
  sub: 'writer',
  tenant: 't',
  scopes: new Set(scopes),
  actors: actors.map((sub) => ({ iss: undefined, sub })),
  tokenId: undefined,
  expiresAt: undefined,
});
const grant = (sub: string, namespace: string, purposes: string[] | null): GrantState => ({
  tenant: 't',
  id: `${sub}-${namespace}`,
  grantee: `iss|${sub}`,
  namespace,
  maxSensitivity: 'CONFIDENTIAL',
  purposes,
  grantedBy: 'iss|root',
  grantedAt: '2026-01-01T00:00:00Z',
  revokedAt: null,
  revokeReason: null,
});

function counted(held: GrantState[]) {
  const source = {
    reads: 0,
    grantsFor: (_tenant: string, _grantees: readonly string[]) => {
      source.reads++;
      return Promise.resolve(held);
    },
  };
  return source;
}

const HELD = [grant('writer', 'acme/eng', ['code-change']), grant('writer', 'acme/ops', null)];

describe('referencePolicy.writeAccess', () => {
  it('reads the grants once for the write check and every read scope of the request', async () => {
    const source = counted(HELD);
    const policy = referencePolicy(source, { defaultClearance: null });
    const access = await policy.writeAccess(principal(['read', 'write']), 'acme/eng/web');
    access.readScope('code-change');
    access.readScope(undefined);
    expect(source.reads).toBe(1);
  });

  it('its read scope equals readScope for each purpose, delegation included', async () => {
    const held = [...HELD, grant('agent', 'acme', null)];
    for (const p of [principal(['read', 'write']), principal(['read', 'write'], ['agent'])]) {
      const policy = referencePolicy(counted(held), { defaultClearance: null });
      const access = await policy.writeAccess(p, 'acme/ops');
      for (const purpose of ['code-change', 'incident', undefined])
        expect(access.readScope(purpose)).toEqual(await policy.readScope(p, purpose));
    }
  });

  it('refuses as checkWrite does: no write scope, or no grant over the namespace', async () => {
    const policy = referencePolicy(counted(HELD), { defaultClearance: null });
    for (const [p, ns] of [
      [principal(['read']), 'acme/eng'],
      [principal(['read', 'write']), 'acme/finance'],
    ] as const) {
      const viaAccess = await policy.writeAccess(p, ns).catch((e: { code?: string; message: string }) => e);
      const viaCheck = await policy.checkWrite(p, ns).catch((e: { code?: string; message: string }) => e);
      expect(viaAccess).toMatchObject({ code: 'FORBIDDEN' });
      expect(viaAccess).toEqual(viaCheck);
    }
  });

  it('a writer without the read scope passes the write check; its read scope is FORBIDDEN, as readScope is', async () => {
    const policy = referencePolicy(counted(HELD), { defaultClearance: null });
    const p = principal(['write']);
    const access = await policy.writeAccess(p, 'acme/ops');
    expect(() => access.readScope(undefined)).toThrow(/read scope is required/);
    await expect(policy.readScope(p, undefined)).rejects.toThrow(/read scope is required/);
  });
});
