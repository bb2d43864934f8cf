import { effectiveGrants, granteesOf, coversNamespace, type AccessDefaults } from './access.ts';
import { forbidden } from './errors.ts';
import type { GrantState } from './fold.ts';
import { hasScope, type Principal } from './principal.ts';
import type { Policy, ReadScope } from './policy.ts';

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
  const scopeOf = async (p: Principal, purpose: string | undefined) => {
    const admin = hasScope(p, 'admin');
    return effectiveGrants(p, purpose, await heldBy(p, admin), defaults, admin);
  };
  // Writes and reviews are not purpose-bound: any live grant that covers the namespace counts.
  const anyPurpose = async (p: Principal) => {
    const admin = hasScope(p, 'admin');
    const held = await heldBy(p, admin);
    const withAnyPurpose = held.map((g) => ({ ...g, purposes: null }));
    return effectiveGrants(p, undefined, withAnyPurpose, defaults, admin);
  };
  return {
    async readScope(principal: Principal, purpose: string | undefined): Promise<ReadScope> {
      if (!hasScope(principal, 'read')) throw forbidden('the read scope is required');
      return { tenant: principal.tenant, grants: await scopeOf(principal, purpose) };
    },
    async checkWrite(principal: Principal, namespace: string): Promise<void> {
      if (!hasScope(principal, 'write')) throw forbidden('the write scope is required');
      if (!coversNamespace(await anyPurpose(principal), namespace))
        throw forbidden('no grant covers this namespace');
    },
    async checkReview(principal: Principal, namespace: string): Promise<void> {
      if (!hasScope(principal, 'review')) throw forbidden('the review scope is required');
      if (!coversNamespace(await anyPurpose(principal), namespace))
        throw forbidden('no grant covers this namespace');
    },
  };
}
