import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { ProposeCommand, decidePropose, type DecideContext } from '../../src/domain/commands.ts';
import type { LedgerEvent } from '../../src/domain/events.ts';
import type { Principal } from '../../src/domain/principal.ts';
import type { LedgerPosition } from '../../src/ports/ledger.ts';
import { endpoints, ledgerOnFreshTopic } from '../support/harness.ts';

/**
 * One append is one record batch on the real broker: a request's events (its entities, then the record
 * about them) are stored or refused together, and a consumer's fetch, which holds whole record batches,
 * never holds part of one. Before, the first event of an append on an idle ledger went out in a send of
 * its own, and a busy queue was cut at ~900 KB wherever it fell: the projection applied an entity in one
 * transaction and its record in the next, and a writer in between made a second entity for the same name.
 */
const { topic, adapters } = ledgerOnFreshTopic('append-whole');

const principal: Principal = {
  iss: 'test',
  sub: 'writer',
  tenant: `whole-${randomUUID().slice(0, 8)}`,
  scopes: new Set(['write']),
  actors: [],
  tokenId: undefined,
  expiresAt: undefined,
};
const ctx: DecideContext = { principal, now: new Date('2026-03-01T00:00:00Z'), newId: () => randomUUID() };

/** A proposal about three new entities: four events, the last carrying ~2 × `textBytes` of statement and rationale. */
function proposal(n: string, textBytes: number): LedgerEvent[] {
  const cmd = ProposeCommand.parse({
    namespace: 'acme/whole',
    class: 'FACT',
    statement: { subject: `s-${n}`, predicate: 'is', object: 'o', text: `${n} `.padEnd(textBytes, 'x') },
    rationale: 'r'.repeat(textBytes),
    about: [1, 2, 3].map((k) => ({ alias: `entity-${n}-${k}`, type: 'thing' })),
    purpose: 'test',
    idempotencyKey: `p-${n}`,
  });
  const events = decidePropose(
    ctx,
    cmd,
    cmd.about.map((ref) => ({ ref, existingId: undefined })),
    'ACTIVE',
  );
  expect(events.map((e) => e.type)).toEqual([
    'EntityCreated',
    'EntityCreated',
    'EntityCreated',
    'RecordProposed',
  ]);
  return events;
}

/** Every message on the topic: the first offset of the record batch it was stored in, and its mark. */
async function recordBatches(): Promise<Map<string, { batch: string; continues: boolean }>> {
  const { highWatermark } = (await adapters.ledger.offsets())[0]!;
  const kafka = new Kafka({
    clientId: 'append-whole-test',
    brokers: endpoints().KAFKA_BROKERS.split(','),
    logLevel: logLevel.NOTHING,
  });
  const consumer = kafka.consumer({ groupId: `append-whole-${randomUUID()}` });
  const seen = new Map<string, { batch: string; continues: boolean }>();
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          eachBatch: async ({ batch }) => {
            for (const m of batch.messages) {
              const context = (m as unknown as { batchContext: { firstOffset: string } }).batchContext;
              seen.set(m.offset, {
                batch: context.firstOffset,
                continues: m.headers?.['muninn-continues'] !== undefined,
              });
            }
            if (seen.size >= Number(highWatermark)) resolve();
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return seen;
}

describe('an append is one record batch', () => {
  const appended: LedgerPosition[][] = [];

  it('on an idle ledger, and from a queue of 40 appends of ~40 KB each (over two sends’ worth)', async () => {
    appended.push(await adapters.ledger.append(proposal('idle', 200)));
    appended.push(
      ...(await Promise.all(
        Array.from({ length: 40 }, (_, i) => adapters.ledger.append(proposal(`busy-${i}`, 19_000))),
      )),
    );
    const stored = await recordBatches();
    const batchesOf = (positions: LedgerPosition[]) =>
      new Set(positions.map((p) => stored.get(p.offset)!.batch));
    for (const positions of appended) expect(batchesOf(positions).size).toBe(1);
    // The queue did not fit one send: it went out in several, each ending where an append ends.
    expect(new Set(appended.flatMap(batchesOf)).size).toBeGreaterThan(2);
    // Every event of an append but its last is marked: the projector's transactions end on appends too.
    for (const positions of appended)
      expect(positions.map((p) => stored.get(p.offset)!.continues)).toEqual([true, true, true, false]);
  });
});
