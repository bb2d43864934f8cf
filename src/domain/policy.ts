import type { Principal } from './principal.ts';
import type { Sensitivity } from './model.ts';

/** The caller's entitlement, compiled into every read query (filter before rank, count or order). */
export interface ReadScope {
  readonly tenant: string;
  /** Namespace subtrees the caller may read; null = the whole tenant. */
  readonly namespaceRoots: readonly string[] | null;
  /** Highest sensitivity the caller may see. */
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
  /** Throws FORBIDDEN when the principal may not review proposals in `namespace`. */
  checkReview(principal: Principal, namespace: string): Promise<void>;
}
