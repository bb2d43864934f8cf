import type { LedgerEvent } from './events.ts';
import type { Receipt } from './projection-state.ts';
import type { Outcome } from './model.ts';

/** The receipt an event's fold leaves: the event's identity and key, and what came of it. */
export function receiptOf(
  e: LedgerEvent,
  outcome: Outcome,
  recordId: string | null,
  version: number | null,
  reason: string | null,
): Receipt {
  return {
    tenant: e.tenant,
    idempotencyKey: e.idempotencyKey,
    commandHash: e.commandHash,
    eventId: e.eventId,
    outcome,
    recordId,
    version,
    reason,
    recordedAt: e.recordedAt,
  };
}
