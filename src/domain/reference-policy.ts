import { forbidden } from './errors.ts';
import { hasScope, type Principal } from './principal.ts';
import type { Policy, ReadScope } from './policy.ts';

/**
 * The built-in reference policy: a principal reads and writes only inside its own tenant, needs the
 * `read` scope to read and `write` to write. Namespace grants narrow this further once granted
 * (AccessGranted events); until then a tenant member sees the tenant.
 */
export const referencePolicy: Policy = {
  async readScope(principal: Principal): Promise<ReadScope> {
    if (!hasScope(principal, 'read')) throw forbidden('the read scope is required');
    return { tenant: principal.tenant, namespaceRoots: null, maxSensitivity: 'RESTRICTED' };
  },
  async checkWrite(principal: Principal): Promise<void> {
    if (!hasScope(principal, 'write')) throw forbidden('the write scope is required');
  },
  async checkReview(principal: Principal): Promise<void> {
    if (!hasScope(principal, 'review')) throw forbidden('the review scope is required');
  },
};
