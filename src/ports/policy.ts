import type { Principal } from '../domain/principal.ts';
import type { ReadScope } from './graph.ts';

/**
 * Entitlement. The reference implementation is built in; an engine that errors or cannot be reached
 * means deny. Reads get a ReadScope that every query compiles into its WHERE clause.
 */
export interface Policy {
  /** Throws FORBIDDEN when the principal may not read at all for this purpose. */
  readScope(principal: Principal, purpose: string | undefined): Promise<ReadScope>;
  /** Throws FORBIDDEN when the principal may not write into `namespace`. */
  checkWrite(principal: Principal, namespace: string): Promise<void>;
}
