import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decidePropose, ProposeCommand } from '../../src/domain/commands.ts';
import type { LedgerEvent } from '../../src/domain/events.ts';
import type { LedgerMessage } from '../../src/ports/ledger.ts';
import { isMuninnError } from '../../src/domain/errors.ts';
import { connectAdapters } from '../../src/compose.ts';
import { applyBatch } from '../../src/projector/apply.ts';
import { Projector } from '../../src/projector/projector.ts';
import { rebuild } from '../../src/projector/rebuild.ts';
import { silentLogger } from '../../src/ports/logger.ts';
import { caughtUp, testConfig } from '../support/harness.ts';
import { writerPrincipal } from '../support/principals.ts';

/**
 * `muninn rebuild` beside a running projector. The rebuild empties the graph, checkpoints included, and
 * replays the ledger; a projector still consuming went on applying the events it fetched next onto the
 * emptied graph and moved their partition's checkpoint there, so the replay, reaching that partition,
 * took everything before it as applied and skipped it (the first case, before the fence: 610 of 2,060
 * records in the graph, then 4,080 of 5,580). The rebuild now fences the topic's projection
 * first: a projector's transaction that finds a fence it does not hold is refused (retryable) and retried
 * until the rebuild has replayed the ledger and lifted it, then skips what the replay applied.
 */
const suffix = randomUUID().slice(0, 8);
const topic = `muninn.test.fence.${suffix}`;
const config = testConfig({
  MUNINN_LEDGER_TOPIC: topic,
  MUNINN_DLQ_TOPIC: `${topic}.dlq`,
  MUNINN_PROJECTOR_GROUP: `fence-${suffix}`,
  MUNINN_LEDGER_PARTITIONS: '2',
  MUNINN_PROJECTOR_BATCH_MAX: '20',
});
const { store, ledger, decode } = connectAdapters(config, silentLogger);
const tenants = [`fence-${suffix}-a`, `fence-${suffix}-b`, `fence-${suffix}-c`];
let n = 0;

function proposals(count: number): LedgerEvent[] {
  return Array.from({ length: count }, () => {
    const i = n++;
    const cmd = ProposeCommand.parse({
      namespace: 'acme/platform',
      class: 'FACT',
      statement: { subject: `s${i}`, predicate: 'is', object: `o${i}`, text: `statement ${i}` },
      purpose: 'fence-test',
      idempotencyKey: `k-${i}`,
    });
    const principal = writerPrincipal(tenants[i % tenants.length]!);
    return decidePropose({ principal, now: new Date(), newId: randomUUID }, cmd, [], 'ACTIVE');
  }).flat();
}

async function recordCount(): Promise<number> {
  const res = await store.db.read(
    'test.fence.count',
    'MATCH (n:Record) WHERE n.tenant IN $tenants RETURN count(n) AS c',
    { tenants },
  );
  return Number(res.records[0]!.get('c'));
}

async function until(what: string, ok: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The ledger's messages, and those of the first message's partition: one that holds some (which
 * partitions hold any depends on how the tenants' keys hash).
 */
async function ledgerMessages(): Promise<{ all: LedgerMessage[]; partition: number; one: LedgerMessage[] }> {
  const all: LedgerMessage[] = [];
  await ledger.readAll(async (b) => void all.push(...b.messages), 500);
  const partition = all[0]!.partition;
  return { all, partition, one: all.filter((m) => m.partition === partition) };
}

const deps = () => ({
  store,
  topic,
  deadLetter: (d: Parameters<typeof ledger.deadLetter>[0]) => ledger.deadLetter(d),
  decode,
});

beforeAll(async () => {
  await store.migrate();
  await ledger.ensureTopics();
});
afterAll(async () => {
  await ledger.close();
  await store.close();
});

describe('a rebuild fences the projection it replays', () => {
  it('a rebuild run while a projector projects new writes loses none of them and duplicates none', async () => {
    await ledger.append(proposals(1500));
    const projector = new Projector({
      ledger,
      store: store.projector,
      topic,
      groupId: config.kafka.groupId,
      sessionTimeoutMs: config.kafka.sessionTimeoutMs,
      batchMax: config.kafka.batchMax,
      logger: silentLogger,
      decode,
    });
    await projector.start();
    try {
      await until('the projector to catch up', () => caughtUp(ledger, store, topic));
      expect(await recordCount()).toBe(1500);
      // Writes keep arriving while the rebuild runs, so the projector has work throughout (at most 3,000:
      // a rebuild that first empties a big graph would otherwise leave a long catch-up).
      let writing = true;
      const writer = (async () => {
        while (writing && n < 4500) {
          await ledger.append(proposals(10));
          await new Promise((r) => setTimeout(r, 15));
        }
      })();
      const report = await rebuild(ledger, store, topic, 50, undefined, decode);
      writing = false;
      await writer;
      expect(report.events).toBeGreaterThanOrEqual(1500);
      await until('the projector to catch up after the rebuild', () => caughtUp(ledger, store, topic));
      // Every proposal appended is one record, once: the replayed ones and those the projector applied.
      const records = await recordCount();
      console.log(
        `rebuild fence: ${report.events} events replayed in ${report.seconds.toFixed(1)} s, ${n - 1500} proposals written from its start; ${records} of ${n} records in the graph`,
      );
      expect(records).toBe(n);
    } finally {
      await projector.stop();
    }
    const live = await store.stateHash();
    expect((await rebuild(ledger, store, topic, 500, undefined, decode)).hash).toBe(live.hash);
  }, 180_000);

  it('a projector transaction under a fence it does not hold is refused as retryable, and passes once the fence is lifted', async () => {
    await ledger.append(proposals(5));
    const fence = await store.fenceProjection(topic, 2);
    const { partition, one } = await ledgerMessages();
    const refused = await applyBatch(deps(), partition, one).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isMuninnError(refused) && refused.code).toBe('UNAVAILABLE');
    expect(isMuninnError(refused) && refused.retryable).toBe(true);
    expect(String((refused as Error).message)).toContain('rebuild');
    // The fence's holder passes.
    await applyBatch({ ...deps(), fence }, partition, one);
    await store.liftProjectionFence(topic, fence);
    const after = await applyBatch(deps(), partition, one);
    expect(after.applied).toBe(0); // the holder applied them already: the checkpoint says so
  });

  it('a newer fence takes over: the older holder is refused, lifting the older one leaves the newer up', async () => {
    const { partition, one } = await ledgerMessages();
    const older = await store.fenceProjection(topic, 2);
    const newer = await store.fenceProjection(topic, 2);
    const code = (fence?: string) =>
      applyBatch({ ...deps(), ...(fence ? { fence } : {}) }, partition, one).then(
        () => 'applied',
        (e: unknown) => (isMuninnError(e) ? e.code : String(e)),
      );
    expect(await code(older)).toBe('UNAVAILABLE');
    expect(await code(newer)).toBe('applied');
    await store.liftProjectionFence(topic, older);
    expect(await code()).toBe('UNAVAILABLE');
    await store.liftProjectionFence(topic, newer);
    expect(await code()).toBe('applied');
  });

  it('a rebuild lifts its fence when done, and a holder of a fence taken over meanwhile is refused', async () => {
    const older = await store.fenceProjection(topic, 2);
    const report = await rebuild(ledger, store, topic, 500, undefined, decode);
    expect(report.events).toBeGreaterThan(0);
    const fences = await store.db.read(
      'test.fence.left',
      'MATCH (f:ProjectionFence {topic: $topic}) RETURN count(f) AS c',
      { topic },
    );
    expect(Number(fences.records[0]!.get('c'))).toBe(0);
    const { partition, one } = await ledgerMessages();
    const refused = await applyBatch({ ...deps(), fence: older }, partition, one).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isMuninnError(refused) && refused.code).toBe('UNAVAILABLE');
    // A projector, holding no fence, applies again (and skips what the rebuild applied).
    expect((await applyBatch(deps(), partition, one)).applied).toBe(0);
  });

  it('a rebuild that fails leaves the fence up and says so; a rebuild run again completes and lifts it', async () => {
    // The graph store as the rebuild sees it, with a wipe that fails once the fence is up.
    const failing = { ...store, wipe: () => Promise.reject(new Error('the wipe ran out of memory')) };
    const failed = await rebuild(ledger, failing, topic, 500, undefined, decode).then(
      () => null,
      (e: unknown) => e,
    );
    expect(String((failed as Error).message)).toMatch(
      /the wipe ran out of memory; the projection of .* stays fenced .* run `muninn rebuild` again/,
    );
    const { all, partition, one } = await ledgerMessages();
    const refused = await applyBatch(deps(), partition, one).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isMuninnError(refused) && refused.code).toBe('UNAVAILABLE');
    const report = await rebuild(ledger, store, topic, 500, undefined, decode);
    expect(report.events).toBe(all.length);
    expect(await recordCount()).toBe(n);
    expect((await applyBatch(deps(), partition, one)).applied).toBe(0);
  });
});
