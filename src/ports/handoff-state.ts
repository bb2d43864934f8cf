import type { HandoffState } from '../domain/handoff-state.ts';

/**
 * Port: handoff state per stream. `read` returns `initialHandoffState(stream)` when nothing is stored.
 * `transact` is an atomic read-modify-write: `fn` sees the current state; a non-null `next` replaces it
 * in the same transaction. `fn` is pure and synchronous and may be invoked more than once (driver retries);
 * only the last invocation's outcome counts.
 */
export interface HandoffStateStore {
  read(stream: string): Promise<HandoffState>;
  transact<T>(stream: string, fn: (s: HandoffState) => { next: HandoffState | null; result: T }): Promise<T>;
}
