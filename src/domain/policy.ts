import type { Principal } from './principal.ts';
import type { Sensitivity } from './model.ts';

/** The caller's entitlement, compiled into every read query (filter before rank, count or order). */
export interface ReadScope {
  readonly tenant: string;
  /**
   * What the caller may read: each entry a namespace subtree (null = the whole tenant) up to a label.
   * A record is visible when some entry covers both its namespace and its label. Empty = nothing.
   */
  readonly grants: readonly ScopeGrant[];
}

export interface ScopeGrant {
  readonly root: string | null;
  readonly maxSensitivity: Sensitivity;
}

/**
 * Entitlement. The reference implementation is built in; an engine that errors or cannot be reached
 * means deny. Reads get a ReadScope that every query compiles into its WHERE clause.
 */
export interface Policy {
  /** Throws FORBIDDEN when the principal may not read at all for this purpose. */
  readScope(principal: Principal, purpose: string | undefined): Promise<ReadScope>;
  /** Throws FORBIDDEN when the principal may not write into `namespace`. */
  checkWrite(principal: Principal, namespace: string): Promise<void>;
  /**
   * checkWrite, keeping what it read for the same request's read scope: a write that also reads (propose,
   * an episode) asks the grant source once. Its `readScope` answers as `Policy.readScope` would have
   * at the same instant, FORBIDDEN included.
   */
  writeAccess(principal: Principal, namespace: string): Promise<WriteAccess>;
  /** Throws FORBIDDEN when the principal may not review proposals in `namespace`. */
  checkReview(principal: Principal, namespace: string): Promise<void>;
}

/** A write checked by `Policy.writeAccess`, and the caller's read scope from the same grants. */
export interface WriteAccess {
  readScope(purpose: string | undefined): ReadScope;
}
