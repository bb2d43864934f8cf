import type { GrantState } from './projection-state.ts';
import { Sensitivities, type Sensitivity } from './model.ts';
import { principalKey, type Principal } from './principal.ts';
import type { ScopeGrant } from './policy.ts';

/**
 * Entitlement as data: the intersection of the principal's grants, each acting agent's grants, the
 * stated purpose and the record's label. Pure, so that the 300-case leak corpus can enumerate it.
 *
 * - A grant covers a namespace subtree up to a label, for some purposes (null = any purpose).
 * - A request without a stated purpose uses only purpose-free grants.
 * - Every identity in the request — the principal and each actor of its delegation chain — has its own
 *   access, and the caller reads the intersection of them all (every hop can only narrow):
 *   - an identity that was ever granted anything in the tenant has exactly its live grants; once its
 *     last grant is revoked it has nothing (revoking never widens access to the tenant default);
 *   - an identity that was never granted anything has the tenant default (the whole tenant up to
 *     `defaultClearance`, or nothing when that is null) — for an agent too;
 *   - `admin` gives the principal the whole tenant at every label, but only the principal's own share:
 *     an admin acting through an agent reads what that agent may read.
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

/**
 * One identity's own access: its live grants for the purpose when it ever held a grant (revoked ones
 * are kept in the projection for exactly this), else the tenant default.
 */
function ownAccess(
  key: string,
  purpose: string | undefined,
  held: readonly GrantState[],
  defaults: AccessDefaults,
): ScopeGrant[] {
  const ever = held.filter((g) => g.grantee === key);
  if (ever.length > 0) return normalize(forPurpose(ever, purpose));
  return defaults.defaultClearance ? [{ root: null, maxSensitivity: defaults.defaultClearance }] : [];
}

/**
 * The caller's effective read grants for a purpose, given every grant — live and revoked — held by it
 * and its actors (see the rules above).
 */
export function effectiveGrants(
  p: Principal,
  purpose: string | undefined,
  held: readonly GrantState[],
  defaults: AccessDefaults,
  admin: boolean,
): ScopeGrant[] {
  let scope: ScopeGrant[] = admin
    ? [{ root: null, maxSensitivity: 'RESTRICTED' }]
    : ownAccess(principalKey(p), purpose, held, defaults);
  for (const a of p.actors) {
    const key = principalKey({ iss: a.iss ?? p.iss, sub: a.sub });
    scope = intersect(scope, ownAccess(key, purpose, held, defaults));
  }
  return scope;
}

/**
 * Whether everyone who may read `b` may also read `a`, whatever grants exist now or later: `a` lies in
 * `b`'s namespace subtree at a label no higher than `b`'s. (Any grant or default covering `b` covers
 * its subtree up to at least `b`'s label; a grant exactly at `b`'s namespace and label covers nothing
 * else.) A change to `b` caused by `a` — contested, superseded, reinforced — tells `b`'s readers about
 * `a`, so it is made only when this holds.
 */
export const readableWherever = (
  a: { readonly namespace: string; readonly sensitivity: Sensitivity },
  b: { readonly namespace: string; readonly sensitivity: Sensitivity },
): boolean => covers(b.namespace, a.namespace) && rank(a.sensitivity) <= rank(b.sensitivity);

/** Whether the grants let the caller act in `namespace` at all (writes and reviews stay inside access). */
export const coversNamespace = (gs: readonly ScopeGrant[], namespace: string): boolean =>
  gs.some((g) => covers(g.root, namespace));

/** Whether a read scope's grants let the caller read a record of this namespace and label (SCOPE_WHERE, in code). */
export const grantsCover = (
  gs: readonly ScopeGrant[],
  r: { readonly namespace: string; readonly sensitivity: Sensitivity },
): boolean => gs.some((g) => covers(g.root, r.namespace) && rank(r.sensitivity) <= rank(g.maxSensitivity));
