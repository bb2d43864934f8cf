import type { DecideContext } from '../domain/commands.ts';
import type { EmbeddingCache } from '../domain/events.ts';
import { notFound } from '../domain/errors.ts';
import { principalKey, type Principal } from '../domain/principal.ts';
import type { WriteAccess } from '../domain/policy.ts';
import type { Receipt } from '../domain/fold.ts';
import type { RecordView } from '../ports/graph.ts';
import { screenCommand, type CommandName, type ScreenedCommand } from './screen-command.ts';
import type { WriteDeps } from './deps.ts';
import { idempotencyConflict, settle, type WriteReceipt } from './receipts.ts';

/**
 * The one screening pass of a command (src/ingest/screen-command.ts), right after its schema and before
 * anything else reads it: no policy check, lookup, hash, log line or error message sees a raw secret.
 */
export function screenOf<T>(
  d: Pick<WriteDeps, 'fingerprintKey'>,
  command: CommandName,
  cmd: T,
): ScreenedCommand<T> {
  return screenCommand(command, cmd, d.fingerprintKey);
}

export function contextOf(d: Pick<WriteDeps, 'clock' | 'ids'>, principal: Principal): DecideContext {
  return { principal, now: d.clock.now(), newId: () => d.ids.uuid() };
}

export function charge(
  d: Pick<WriteDeps, 'budget'>,
  principal: Principal,
  namespace: string,
  cost: number,
): void {
  d.budget.charge(principal.tenant, principalKey(principal), namespace, cost);
}

/**
 * The caller's write access and its stored receipt for `key` (no idempotency check yet), read side by
 * side: one round trip, not two. A refused access check still throws FORBIDDEN whatever the receipt holds.
 */
export function accessAndReceipt(
  d: Pick<WriteDeps, 'policy' | 'store'>,
  principal: Principal,
  namespace: string,
  key: string,
): Promise<[WriteAccess, Receipt | undefined]> {
  return Promise.all([d.policy.writeAccess(principal, namespace), d.store.receipt(principal.tenant, key)]);
}

/** The idempotency rule: same key and same input → the original receipt; another input → CONFLICT. */
export async function priorReceipt(
  d: Pick<WriteDeps, 'store'>,
  tenant: string,
  key: string,
  hash: string,
): Promise<WriteReceipt | undefined> {
  return receiptFor(await d.store.receipt(tenant, key), key, hash);
}

/** The idempotency rule on a receipt already read (accessAndReceipt). */
export function receiptFor(r: Receipt | undefined, key: string, hash: string): WriteReceipt | undefined {
  if (!r) return undefined;
  if (r.commandHash !== hash) throw idempotencyConflict(key);
  return settle(r, [r.eventId], null);
}

/** The record as the caller may see it (NOT_FOUND otherwise: an invisible record is not confirmed). */
export async function visible(
  d: Pick<WriteDeps, 'store' | 'policy'>,
  principal: Principal,
  id: string,
  what: string,
): Promise<RecordView> {
  const current = await d.store.record(await d.policy.readScope(principal, undefined), id);
  if (!current) throw notFound(`no ${what} ${id}`);
  return current;
}

/**
 * The vectors of texts a command carries in its event (a revise's new words, a rollback's restored ones):
 * one model call, each as the event stores it, null where the embedder gave none.
 */
export async function embeddingsOf(
  d: Pick<WriteDeps, 'embedder'>,
  texts: readonly string[],
): Promise<Array<EmbeddingCache | null>> {
  const vectors = await d.embedder.embed(texts);
  return texts.map((_, i) => {
    const v = vectors[i];
    return v ? { modelId: d.embedder.modelId, vector: [...v] } : null;
  });
}
