import { foldCase } from './model.ts';

/** Who is asking. Keyed on (iss, sub) — never an e-mail or another re-issuable id. */
export const Scopes = ['read', 'write', 'review', 'admin', 'handoff'] as const;
export type Scope = (typeof Scopes)[number];

/** One hop of an RFC 8693 `act` chain, outermost (most recent actor) first. */
export interface Actor {
  readonly iss: string | undefined;
  readonly sub: string;
}

export interface Principal {
  readonly iss: string;
  readonly sub: string;
  readonly tenant: string;
  readonly scopes: ReadonlySet<Scope>;
  /** Delegation chain: actors acting on behalf of (iss, sub), most recent first. */
  readonly actors: readonly Actor[];
  /** Token id, when the token carries one (used for replay detection on the handoff path). */
  readonly tokenId: string | undefined;
  readonly expiresAt: number | undefined;
}

/**
 * A principal reading for a stated purpose: purpose-bound grants apply to its reads (record, records,
 * history, entity and every nested field of what they return), as they do to recall.
 */
export interface Reader extends Principal {
  readonly purpose?: string | undefined;
}

/** A stable, printable id for the person behind the principal. */
export const principalKey = (p: Pick<Principal, 'iss' | 'sub'>): string => `${p.iss}|${p.sub}`;

/** `admin` implies read, write and review; `handoff` is only ever granted explicitly (Heimdall's identity). */
export const hasScope = (p: Pick<Principal, 'scopes'>, s: Scope): boolean =>
  p.scopes.has(s) || (s !== 'handoff' && p.scopes.has('admin'));

/** Muninn's own identity for a job (curator, eval): reads and writes one tenant, acts for no one. */
export function servicePrincipal(sub: string, tenant: string): Principal {
  return Object.freeze({
    iss: 'muninn',
    sub,
    tenant: foldCase(tenant), // the same folding as a token's tenant (TenantId)
    scopes: new Set<Scope>(['read', 'write']),
    actors: [],
    tokenId: undefined,
    expiresAt: undefined,
  });
}
