import type { LedgerMessage } from '../ports/ledger.ts';

/**
 * A fetched batch in graph transactions of at most `max` events, each ending where an append ends. One
 * append is one request's events (an entity, then the record about it): applied in two transactions, a
 * reader between the two commits would see the entity without its record. Another writer's proposal
 * about the same name then finds the entity's id taken by an entity it may not see, and makes an entity
 * of its own (ingest/plan-entities.ts, resolveEntity): two entities for one name. The ledger keeps an
 * append in one record batch (adapters/kafka/wire.ts, sendSize: unless it is over ~900 KB alone) and a
 * fetch holds whole record batches, so a batch ends at an append's end; a chunk that would not is cut
 * before the append, or, when the append alone is over `max`, after it. Messages without the mark
 * (written before it) end their append.
 */
export function chunksOf(messages: readonly LedgerMessage[], max: number): LedgerMessage[][] {
  const out: LedgerMessage[][] = [];
  let start = 0;
  while (start < messages.length) {
    let end = Math.min(start + max, messages.length);
    if (end < messages.length && messages[end - 1]!.continues) {
      let cut = end - 1;
      while (cut > start && messages[cut - 1]!.continues) cut--;
      if (cut > start) end = cut;
      else while (end < messages.length && messages[end - 1]!.continues) end++;
    }
    out.push(messages.slice(start, end));
    start = end;
  }
  return out;
}
