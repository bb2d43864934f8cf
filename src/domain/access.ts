import type { GrantState } from './fold.ts';
import { Sensitivities, type Sensitivity } from './model.ts';
import { principalKey, type Principal } from './principal.ts';
import type { ScopeGrant } from './policy.ts';

/**
 * Entitlement as data: the intersection of the principal's grants, each acting agent's grants, the
 * stated purpose and the record's label. Pure, so that the 300-case leak corpus can enumerate it.
 *
 * - A grant covers a namespace subtree up to a label, for some purposes (null = any purpose).
 * - A request without a stated purpose uses only purpose-free grants.
 * - A principal with no live grant in the tenant gets the tenant default (the whole tenant up to
 *   `defaultClearance`, or nothing when that is null): grants only ever narrow a member's access.
 * - Each actor in the delegation chain that holds grants narrows the result to what it may read; an
 *   actor without grants acts with its principal's access.
 * - `admin` reads the whole tenant at every label.
 */
export interface AccessDefaults {
  /** What a tenant member without grants reads: the whole tenant up to this label; null = nothing. */
  readonly defaultClearance: Sensitivity | null;
}

const rank = (s: Sensitivity): number => Sensitivities.indexOf(s);
const minLabel = (a: Sensitivity, b: Sensitivity): Sensitivity => (rank(a) <= rank(b) ? a : b);

/** True when subtree `outer` (null = everything) contains namespace or subtree `inner`. */
export const covers = (outer: string | null, inner: string | null): boolean =>
  outer === null || (inner !== null && (inner === outer || inner.startsWith(`${outer}/`)));

const forPurpose = (grants: readonly GrantState[], purpose: string | undefined): ScopeGrant[] =>
  grants
    .filter((g) => g.revokedAt === null)
    .filter((g) => g.purposes === null || (purpose !== undefined && g.purposes.includes(purpose)))
    .map((g) => ({ root: g.namespace, maxSensitivity: g.maxSensitivity }));

/** Pairwise intersection of two grant sets (the deeper subtree, the lower label). */
export function intersect(a: readonly ScopeGrant[], b: readonly ScopeGrant[]): ScopeGrant[] {
  const out: ScopeGrant[] = [];
  for (const x of a)
    for (const y of b) {
      const root = covers(x.root, y.root) ? y.root : covers(y.root, x.root) ? x.root : undefined;
      if (root !== undefined)
        out.push({ root, maxSensitivity: minLabel(x.maxSensitivity, y.maxSensitivity) });
    }
  return normalize(out);
}

/** Drops entries another entry already covers at an equal or higher label; stable order. */
export function normalize(gs: readonly ScopeGrant[]): ScopeGrant[] {
  const out: ScopeGrant[] = [];
  gs.forEach((g, i) => {
    const dominated = gs.some(
      (h, j) =>
        j !== i &&
        covers(h.root, g.root) &&
        rank(h.maxSensitivity) >= rank(g.maxSensitivity) &&
        // of two identical entries keep the first
        !(h.root === g.root && h.maxSensitivity === g.maxSensitivity && j > i),
    );
    if (!dominated) out.push(g);
  });
  return out.sort(
    (x, y) => (x.root ?? '').localeCompare(y.root ?? '') || rank(y.maxSensitivity) - rank(x.maxSensitivity),
  );
}

/** Grantee keys the policy needs: the principal and every actor in its delegation chain. */
export function granteesOf(p: Principal): string[] {
  return [principalKey(p), ...p.actors.map((a) => principalKey({ iss: a.iss ?? p.iss, sub: a.sub }))];
}

/** The caller's effective read grants for a purpose, given every live grant held by it and its actors. */
export function effectiveGrants(
  p: Principal,
  purpose: string | undefined,
  held: readonly GrantState[],
  defaults: AccessDefaults,
  admin: boolean,
): ScopeGrant[] {
  if (admin) return [{ root: null, maxSensitivity: 'RESTRICTED' }];
  const mine = held.filter((g) => g.grantee === principalKey(p) && g.revokedAt === null);
  let scope: ScopeGrant[] =
    mine.length > 0
      ? normalize(forPurpose(mine, purpose))
      : defaults.defaultClearance
        ? [{ root: null, maxSensitivity: defaults.defaultClearance }]
        : [];
  for (const a of p.actors) {
    const key = principalKey({ iss: a.iss ?? p.iss, sub: a.sub });
    const theirs = held.filter((g) => g.grantee === key && g.revokedAt === null);
    if (theirs.length > 0) scope = intersect(scope, forPurpose(theirs, purpose));
  }
  return scope;
}

/** Whether the grants let the caller act in `namespace` at all (writes and reviews stay inside access). */
export const coversNamespace = (gs: readonly ScopeGrant[], namespace: string): boolean =>
  gs.some((g) => covers(g.root, namespace));
