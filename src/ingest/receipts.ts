import { conflict } from '../domain/errors.ts';
import { flaggedForReview } from '../domain/rollback-fold.ts';
import type { Receipt } from '../domain/fold.ts';
import type { Outcome } from '../domain/model.ts';
import type { RecordView } from '../ports/graph.ts';

/** What a writer is told. `PENDING` means appended to the ledger but not awaited (or not yet projected). */
export interface WriteReceipt {
  readonly outcome: Outcome;
  readonly recordId: string | null;
  readonly version: number | null;
  readonly reason: string | null;
  readonly eventIds: readonly string[];
  readonly position: string | null;
}

export const refusal = (reason: string): WriteReceipt => ({
  outcome: 'REJECTED',
  recordId: null,
  version: null,
  reason,
  eventIds: [],
  position: null,
});

/** Versions only grow, so a stale expectedVersion can be refused before it reaches the ledger. */
export function checkVersion(current: RecordView, expectedVersion: number): void {
  if (current.version !== expectedVersion) {
    throw conflict(`expected version ${expectedVersion}, current version is ${current.version}`, {
      currentVersion: current.version,
    });
  }
}

/** A review decision needs a proposal that still waits for review, at the version the reviewer read. */
export function checkReviewable(current: RecordView, expectedVersion: number): void {
  if (current.status !== 'CANDIDATE' && !flaggedForReview(current)) {
    throw conflict(`proposal ${current.id} is ${current.status}, not waiting for review`, {
      currentVersion: current.version,
    });
  }
  checkVersion(current, expectedVersion);
}

/** The stored key minus its principal tag and origin (commands.ts receiptKey): what the caller sent. */
const callerKey = (stored: string): string => stored.replace(/^[0-9a-f]{24}:[udh]:/, '');

export const idempotencyConflict = (stored: string) =>
  conflict(`idempotency key ${JSON.stringify(callerKey(stored))} was already used with a different input`, {
    idempotencyKey: callerKey(stored),
  });

/** A receipt as the writer sees it; a version conflict is an error (CONFLICT) on every path. */
export function settle(r: Receipt, eventIds: readonly string[], position: string | null): WriteReceipt {
  if (r.outcome === 'CONFLICT') {
    throw conflict(r.reason ?? 'version conflict', {
      currentVersion: r.version ?? -1,
      recordId: r.recordId ?? '',
    });
  }
  return {
    outcome: r.outcome,
    recordId: r.recordId,
    version: r.version,
    reason: r.reason,
    eventIds,
    position,
  };
}
