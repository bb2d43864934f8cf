import { MuninnError } from '../domain/errors.ts';
import { LedgerEvent } from '../domain/events.ts';
import type { Receipt } from '../domain/fold.ts';
import type { Principal } from '../domain/principal.ts';
import { StageTimes } from './stage-times.ts';
import type { WriteDeps } from './deps.ts';
import { idempotencyConflict, settle, type WriteReceipt } from './receipts.ts';

export type CommitDeps = Pick<
  WriteDeps,
  'ledger' | 'store' | 'projection' | 'clock' | 'logger' | 'awaitTimeoutMs'
>;

/** Append, optionally wait for the projection, and read the receipt of `primaryId` (default: the last event). */
export async function commit(
  d: CommitDeps,
  principal: Principal,
  key: string,
  hash: string,
  events: LedgerEvent[],
  wait: boolean,
  primaryId?: string,
  times: StageTimes = new StageTimes(),
): Promise<WriteReceipt> {
  assertDecodable(events);
  const positions = await times.time('append', () => d.ledger.append(events));
  const last = positions[positions.length - 1]!;
  d.projection.appended(last.partition, last.offset);
  const primary = events.find((e) => e.eventId === primaryId) ?? events[events.length - 1]!;
  const position = `${last.partition}:${last.offset}`;
  const eventIds = events.map((e) => e.eventId);
  const recordId = 'recordId' in primary.payload ? primary.payload.recordId : null;
  d.logger.info(
    {
      op: primary.type,
      tenant: principal.tenant,
      eventId: primary.eventId,
      events: events.length,
      position,
    },
    'appended',
  );
  const pending: WriteReceipt = {
    outcome: 'PENDING',
    recordId,
    version: null,
    reason: null,
    eventIds,
    position,
  };
  if (!wait) return pending;
  if (
    !(await times.time('await', () => d.projection.waitFor(last.partition, last.offset, d.awaitTimeoutMs)))
  ) {
    return {
      ...pending,
      reason: 'appended to the ledger; projection has not caught up within the await timeout',
    };
  }
  const r = await readReceipt(d, principal.tenant, key);
  if (!r) return { ...pending, reason: 'projected, but no receipt was found within the await timeout' };
  if (r.eventId !== primary.eventId && r.commandHash !== hash) throw idempotencyConflict(key);
  const mine = r.eventId === primary.eventId;
  return settle(r, mine ? eventIds : [r.eventId], mine ? position : null);
}

/** Nothing reaches the ledger that the projector could not decode. */
function assertDecodable(events: readonly LedgerEvent[]): void {
  for (const e of events) {
    const ok = LedgerEvent.safeParse(e);
    if (!ok.success)
      throw new MuninnError(
        'INTERNAL',
        `refusing to append a malformed ${e.type} event`,
        {},
        { cause: ok.error },
      );
  }
}

/**
 * The receipt of `key`, once the projection has caught up. Neo4j makes a commit's node updates visible
 * before its index updates: the checkpoint can be seen a few ms before the receipt written in the same
 * transaction is found by key. Read until it is (or the await timeout has passed).
 */
async function readReceipt(d: CommitDeps, tenant: string, key: string): Promise<Receipt | undefined> {
  const deadline = d.clock.now().getTime() + d.awaitTimeoutMs;
  let r = await d.store.receipt(tenant, key);
  while (!r && d.clock.now().getTime() < deadline) {
    await new Promise((res) => setTimeout(res, 5));
    r = await d.store.receipt(tenant, key);
  }
  return r;
}

/** An episode's answer: one receipt per statement (the episode's own receipt excluded), plus refusals. */
export async function episodeReceipts(
  d: CommitDeps,
  tenant: string,
  key: string,
  refused: WriteReceipt[],
  episode: WriteReceipt | null,
  pendingEvents: LedgerEvent[] | null,
  expectedStatements: number | null = null,
): Promise<WriteReceipt[]> {
  if (pendingEvents) {
    return [
      ...pendingEvents
        .filter((e) => e.type === 'RecordProposed' || e.type === 'RecordReinforced')
        .map((e) => ({
          outcome: 'PENDING' as const,
          recordId: 'recordId' in e.payload ? e.payload.recordId : null,
          version: null,
          reason: null,
          eventIds: [e.eventId],
          position: episode?.position ?? null,
        })),
      ...refused,
    ];
  }
  const statements = await statementReceipts(d, tenant, key, expectedStatements ?? 0);
  return [
    ...statements.map((r) => ({
      outcome: r.outcome,
      recordId: r.recordId,
      version: r.version,
      reason: r.reason,
      eventIds: [r.eventId],
      position: null,
    })),
    ...refused,
  ];
}

/** The receipts of the episode's statements (`<key>#stmt:<n>`), in statement order. */
async function statementReceipts(
  d: CommitDeps,
  tenant: string,
  key: string,
  expected: number,
): Promise<Receipt[]> {
  const deadline = d.clock.now().getTime() + d.awaitTimeoutMs;
  const read = async () =>
    (await d.store.receiptsByPrefix(tenant, key)).filter((r) => /#stmt:\d+$/.test(r.idempotencyKey));
  let statements = await read();
  // Same index-visibility lag as in readReceipt(): wait until every statement's receipt can be read.
  while (statements.length < expected && d.clock.now().getTime() < deadline) {
    await new Promise((res) => setTimeout(res, 5));
    statements = await read();
  }
  if (statements.length < expected) {
    d.logger.warn(
      {
        op: 'ingestEpisode',
        tenant,
        expected,
        found: statements.length,
        keys: statements.map((r) => r.idempotencyKey),
      },
      'statement receipts missing',
    );
  }
  return statements.sort((a, b) => stmtIndex(a) - stmtIndex(b));
}

const stmtIndex = (r: Receipt): number => Number(/#stmt:(\d+)$/.exec(r.idempotencyKey)?.[1] ?? 0);
