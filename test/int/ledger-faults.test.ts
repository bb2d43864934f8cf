import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { connectAdapters } from '../../src/main.ts';
import type { Ledger } from '../../src/ports/ledger.ts';
import { silentLogger } from '../../src/ports/logger.ts';
import { restartService } from '../../scripts/stack.mjs';
import { testConfig } from '../support/harness.ts';
import { ownsStack } from '../support/owned-stack.ts';

/**
 * The ledger's promise under a broker crash: an append it acknowledged is on the topic, at the position
 * it answered. Appenders run without pause while the broker is SIGKILLed and kept down longer than the
 * producer's retries, so sends fail; one of them may have reached the log before the kill without its
 * answer reaching us. Every append acknowledged after the restart must still be stored, and the message
 * at each acknowledged position must be the one appended there (a producer that reuses the sequence
 * number of a failed send has its next batch taken by the broker for a duplicate of the stored one and
 * dropped, while the send is answered with the old batch's offsets).
 *
 * Like test/int/faults.test.ts it restarts Kafka, so it runs only on the stack this run started.
 */
const owned = await ownsStack();
const suffix = randomUUID().slice(0, 8);
const TOPIC = `muninn.test.ledger-faults.${suffix}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MAX_CRASHES = 6;
/** Longer than the producer's retries (~21 s): the send in flight at the kill fails to its caller. */
const DOWN_MS = 25_000;

const adapters = owned
  ? connectAdapters(
      testConfig({
        MUNINN_LEDGER_TOPIC: TOPIC,
        MUNINN_DLQ_TOPIC: `${TOPIC}.dlq`,
        MUNINN_LEDGER_PARTITIONS: '2',
      }),
      silentLogger,
    )
  : undefined;
afterAll(async () => {
  await adapters?.ledger.close();
  await adapters?.store.close();
});

/** Every message on the topic, "partition:offset" → value. */
async function topicContents(ledger: Ledger): Promise<Map<string, string>> {
  const stored = new Map<string, string>();
  await ledger.readAll(async (b) => {
    for (const m of b.messages)
      stored.set(`${b.partition}:${m.offset}`, Buffer.from(m.value ?? []).toString('utf8'));
  }, 500);
  return stored;
}

describe('ledger appends across a broker crash', () => {
  it.skipIf(!owned)(
    'every acknowledged append is on the topic, at the position it was acknowledged with',
    async () => {
      const ledger = adapters!.ledger;
      await ledger.ensureTopics();
      const acked = new Map<string, string>(); // "partition:offset" → value
      const failed = new Set<string>();
      let n = 0;
      let running = true;
      const appender = async (w: number) => {
        while (running) {
          const value = JSON.stringify({ w, n: n++ });
          try {
            const p = await ledger.appendRaw(`tenant-${w}`, value);
            const at = `${p.partition}:${p.offset}`;
            expect(acked.has(at), `two appends acknowledged at ${at}`).toBe(false);
            acked.set(at, value);
          } catch {
            failed.add(value);
            await sleep(200);
          }
        }
      };
      const load = Array.from({ length: 16 }, (_, w) => appender(w));
      // The case under test needs a send that failed to its caller after reaching the log (the kill fell
      // between the broker's write and its answer): crash until one did, a few times at most.
      let ambiguous = 0;
      let stored = new Map<string, string>();
      for (let crash = 1; crash <= MAX_CRASHES && ambiguous === 0; crash++) {
        await sleep(2000);
        await restartService('kafka', { hard: true, downMs: DOWN_MS, log: () => undefined });
        await sleep(3000);
        stored = await topicContents(ledger);
        ambiguous = [...stored.values()].filter((v) => failed.has(v)).length;
        process.stderr.write(
          `[ledger-faults] crash ${crash}: ${acked.size} acknowledged, ${failed.size} failed, ${ambiguous} of those on the topic\n`,
        );
      }
      const beforeStop = acked.size;
      await sleep(2000);
      running = false;
      await Promise.all(load);
      expect(ambiguous, 'no failed send had reached the log: the case was not exercised').toBeGreaterThan(0);
      expect(acked.size).toBeGreaterThan(beforeStop);

      stored = await topicContents(ledger);
      const wrong = [...acked].filter(([at, value]) => stored.get(at) !== value);
      expect(wrong.map(([at, value]) => `${at}: acknowledged ${value}, stored ${stored.get(at)}`)).toEqual(
        [],
      );
    },
    MAX_CRASHES * 60_000,
  );
});
