import { effectiveGrants, granteesOf, coversNamespace, type AccessDefaults } from './access.ts';
import { forbidden } from './errors.ts';
import type { GrantState } from './projection-state.ts';
import { hasScope, type Principal } from './principal.ts';
import type { Policy, ReadScope, WriteAccess } from './policy.ts';

/** Where the policy reads grants (the projected AccessGranted / AccessRevoked events). */
export interface GrantSource {
  /** Every grant these grantees ever held in the tenant, revoked ones included (see access.ts). */
  grantsFor(tenant: string, grantees: readonly string[]): Promise<GrantState[]>;
}

/**
 * The built-in reference policy: a principal reads and writes only inside its own tenant; `read`, `write`
 * and `review` scopes gate the operations; namespace grants (ledger events) and the delegation chain
 * narrow what it reads (see access.ts). A grant source that errors means deny (the error propagates).
 */
export function referencePolicy(grants: GrantSource, defaults: AccessDefaults): Policy {
  // An admin acting directly needs no grants; through agents, the agents' grants narrow it.
  const heldBy = (p: Principal, admin: boolean) =>
    admin && p.actors.length === 0 ? Promise.resolve([]) : grants.grantsFor(p.tenant, granteesOf(p));
  // Writes and reviews are not purpose-bound: any live grant that covers the namespace counts.
  const anyPurposeOf = (p: Principal, held: readonly GrantState[], admin: boolean) =>
    effectiveGrants(
      p,
      undefined,
      held.map((g) => ({ ...g, purposes: null })),
      defaults,
      admin,
    );
  const anyPurpose = async (p: Principal) => {
    const admin = hasScope(p, 'admin');
    return anyPurposeOf(p, await heldBy(p, admin), admin);
  };
  const mayRead = (p: Principal) => {
    if (!hasScope(p, 'read')) throw forbidden('the read scope is required');
  };
  const readScopeFrom = (p: Principal, purpose: string | undefined, held: readonly GrantState[]) => {
    mayRead(p);
    return { tenant: p.tenant, grants: effectiveGrants(p, purpose, held, defaults, hasScope(p, 'admin')) };
  };
  const writeAccess = async (principal: Principal, namespace: string): Promise<WriteAccess> => {
    if (!hasScope(principal, 'write')) throw forbidden('the write scope is required');
    const admin = hasScope(principal, 'admin');
    const held = await heldBy(principal, admin);
    if (!coversNamespace(anyPurposeOf(principal, held, admin), namespace))
      throw forbidden('no grant covers this namespace');
    return { readScope: (purpose) => readScopeFrom(principal, purpose, held) };
  };
  return {
    async readScope(principal: Principal, purpose: string | undefined): Promise<ReadScope> {
      mayRead(principal); // before the grants are read
      return readScopeFrom(principal, purpose, await heldBy(principal, hasScope(principal, 'admin')));
    },
    async checkWrite(principal: Principal, namespace: string): Promise<void> {
      await writeAccess(principal, namespace);
    },
    writeAccess,
    async checkReview(principal: Principal, namespace: string): Promise<void> {
      if (!hasScope(principal, 'review')) throw forbidden('the review scope is required');
      if (!coversNamespace(await anyPurpose(principal), namespace))
        throw forbidden('no grant covers this namespace');
    },
  };
}
