import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitioner } from '../../src/adapters/kafka/kafka-ledger.ts';
import {
  decidePropose,
  decideRevise,
  ProposeCommand,
  ReviseCommand,
  type DecideContext,
} from '../../src/domain/commands.ts';
import type { LedgerEvent } from '../../src/domain/events.ts';
import { writerPrincipal } from '../support/principals.ts';
import { connectAdapters } from '../../src/compose.ts';
import { silentLogger } from '../../src/ports/logger.ts';
import { startApp, testConfig, type TestApp } from '../support/harness.ts';

/**
 * The ledger's ordering guarantee and its fairness, on a 3-partition topic with the projector running:
 * - a tenant's events are one partition's (the key is the tenant), so they are applied in the order they
 *   were appended: a chain of revisions, each expecting the version before it, all apply;
 * - a hot tenant's backlog does not hold up a tenant on another partition: the cold tenant's write is
 *   applied while the hot partition is still far behind.
 */
const PARTITIONS = 3;
const HOT_EVENTS = 1500;
const REVISIONS = 20;
const suffix = randomUUID().slice(0, 8);
const env = {
  MUNINN_LEDGER_TOPIC: `muninn.test.partitions.${suffix}`,
  MUNINN_DLQ_TOPIC: `muninn.test.partitions.${suffix}.dlq`,
  MUNINN_PROJECTOR_GROUP: `partitions-${suffix}`,
  MUNINN_LEDGER_PARTITIONS: String(PARTITIONS),
  MUNINN_PROJECTOR_BATCH_MAX: '20',
};

let app: TestApp | undefined;
const adapters = connectAdapters(testConfig(env), silentLogger);

beforeAll(async () => {
  await adapters.ledger.ensureTopics();
});
afterAll(async () => {
  await adapters.ledger.close();
  await adapters.store.close();
  await app?.stop();
});

/**
 * Two tenants on different partitions, the hot one on the lower-numbered partition: a projector that
 * applied one partition's fetched events after another's would apply the whole hot backlog first.
 */
function tenantsOnTwoPartitions(): { hot: string; cold: string } {
  const of = partitioner(PARTITIONS);
  for (let h = 0; ; h++) {
    const hot = `hot-${suffix}-${h}`;
    if (of(hot) !== 0) continue;
    for (let i = 0; ; i++) {
      const cold = `cold-${suffix}-${i}`;
      if (of(cold) !== of(hot)) return { hot, cold };
    }
  }
}

function ctxFor(tenant: string): DecideContext {
  const principal = writerPrincipal(tenant);
  let t = Date.parse('2026-03-01T00:00:00Z');
  return {
    principal,
    get now() {
      return new Date((t += 3));
    },
    newId: () => randomUUID(),
  };
}

function proposal(ctx: DecideContext, n: number): LedgerEvent[] {
  const cmd = ProposeCommand.parse({
    namespace: 'acme/load',
    class: 'FACT',
    statement: { subject: `s${n}`, predicate: 'is', object: `o${n}`, text: `statement number ${n}` },
    purpose: 'partition-test',
    idempotencyKey: `p-${n}`,
  });
  return decidePropose(ctx, cmd, [], 'ACTIVE');
}

async function checkpoint(partition: number): Promise<bigint> {
  const cp = (await adapters.store.checkpoints(env.MUNINN_LEDGER_TOPIC)).find(
    (c) => c.partition === partition,
  );
  return cp ? BigInt(cp.offset) : -1n;
}

async function until(cond: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('ledger partitions', () => {
  it("a hot tenant's backlog does not hold up another partition's tenant, and each tenant's revisions apply in order", async () => {
    const { hot, cold } = tenantsOnTwoPartitions();
    const hotCtx = ctxFor(hot);
    // Given a chain of revisions of one hot record (each expects the version before it) inside a large backlog
    const first = proposal(hotCtx, 0);
    const recordId = (first[0] as Extract<LedgerEvent, { type: 'RecordProposed' }>).payload.recordId;
    const chain = Array.from({ length: REVISIONS }, (_, i) =>
      decideRevise(
        hotCtx,
        ReviseCommand.parse({
          id: recordId,
          expectedVersion: i + 1,
          statement: { subject: 's0', predicate: 'is', object: `v${i + 2}`, text: `revision ${i + 2}` },
          purpose: 'partition-test',
          idempotencyKey: `r-${i}`,
        }),
        'acme/load',
      ),
    );
    const backlog = Array.from({ length: HOT_EVENTS }, (_, n) => proposal(hotCtx, n + 1)).flat();
    const hotEvents = [
      ...first,
      ...backlog.slice(0, HOT_EVENTS / 2),
      ...chain,
      ...backlog.slice(HOT_EVENTS / 2),
    ];
    // Appended in order, ten at a time: an append is one record batch and one projector transaction at
    // least (src/projector/chunks.ts), so one append of the whole backlog would be applied in one step.
    const hotPositions = [];
    for (let i = 0; i < hotEvents.length; i += 10)
      hotPositions.push(...(await adapters.ledger.append(hotEvents.slice(i, i + 10))));
    const hotEnd = hotPositions.at(-1)!;
    // When a cold tenant writes once, after the whole backlog, and then the projector starts
    const [coldPos] = await adapters.ledger.append(proposal(ctxFor(cold), 0));
    expect(coldPos!.partition).not.toBe(hotEnd.partition);
    app = await startApp(env);
    // Then the cold write is applied while the hot partition is still behind
    await until(async () => (await checkpoint(coldPos!.partition)) >= BigInt(coldPos!.offset), 120_000);
    const hotAt = await checkpoint(hotEnd.partition);
    expect(
      hotAt,
      `hot partition at ${hotAt} of ${hotEnd.offset} when the cold write was applied`,
    ).toBeLessThan(BigInt(hotEnd.offset));
    // And, once the backlog is applied, the hot record went through every revision, in order
    await until(async () => (await checkpoint(hotEnd.partition)) >= BigInt(hotEnd.offset), 300_000);
    const res = await adapters.store.db.read(
      'test.partitions',
      'MATCH (n:Record {tenant: $t, id: $id}) RETURN n.version AS v, n.object AS o',
      { t: hot, id: recordId },
    );
    expect(res.records.map((r) => [Number(r.get('v')), r.get('o')])).toEqual([
      [REVISIONS + 1, `v${REVISIONS + 1}`],
    ]);
  });
});
