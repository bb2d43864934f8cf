import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decidePropose, ProposeCommand } from '../../src/domain/commands.ts';
import type { LedgerEvent } from '../../src/domain/events.ts';
import { MultisetHash } from '../../src/domain/multiset-hash.ts';
import type { LedgerMessage } from '../../src/ports/ledger.ts';
import { connectAdapters } from '../../src/compose.ts';
import { applyBatch } from '../../src/projector/apply.ts';
import { rebuild } from '../../src/projector/rebuild.ts';
import { silentLogger } from '../../src/ports/logger.ts';
import { testConfig } from '../support/harness.ts';
import { writerPrincipal } from '../support/principals.ts';
import { stateDiff } from '../support/state-diff.ts';

/**
 * Invariant 3 without the kill test's dice: the graph a log projects to does not depend on where the
 * projector's transactions end. Live, they end wherever a fetch, a restart or MUNINN_PROJECTOR_BATCH_MAX
 * cut the stream; a rebuild reads 500 events at a time. Here every event is applied alone, then the same
 * log is rebuilt, and the two states must be the same line for line.
 *
 * The log holds the case the kill test found on 2026-12-05 (one run in four): a producer's retry of a
 * proposal landed before the first copy of its request, so a record came before the entity it is about.
 * Applied alone, the record was written while the entity did not exist and got no ABOUT edge; in a
 * rebuild's batch the entity, written first, was there. Like a relation to a record not yet known, an
 * entity not yet known is not what the record is about (fold.ts, `proposed`).
 */
const suffix = randomUUID().slice(0, 8);
const topic = `muninn.test.batches.${suffix}`;
const config = testConfig({
  MUNINN_LEDGER_TOPIC: topic,
  MUNINN_DLQ_TOPIC: `${topic}.dlq`,
  MUNINN_LEDGER_PARTITIONS: '1',
});
const { store, ledger, decode } = connectAdapters(config, silentLogger);
const tenant = `batches-${suffix}`;

beforeAll(async () => {
  await store.wipe();
  await store.migrate();
  await ledger.ensureTopics();
});
afterAll(async () => {
  await ledger.close();
  await store.close();
});

function proposal(n: number, about: string[]): LedgerEvent[] {
  const cmd = ProposeCommand.parse({
    namespace: 'acme/platform',
    class: 'FACT',
    statement: { subject: `s${n}`, predicate: 'is', object: `o${n}`, text: `statement ${n}` },
    about: about.map((alias) => ({ alias, type: 'service' })),
    purpose: 'batches-test',
    idempotencyKey: `k-${n}`,
  });
  const ctx = {
    principal: writerPrincipal(tenant),
    now: new Date(Date.UTC(2026, 0, 1, 0, 0, n)),
    newId: () => randomUUID(),
  };
  return decidePropose(
    ctx,
    cmd,
    cmd.about.map((ref) => ({ ref, existingId: undefined })),
    'ACTIVE',
  );
}

async function messagesOf(): Promise<LedgerMessage[]> {
  const out: LedgerMessage[] = [];
  await ledger.readAll(async (b) => void out.push(...b.messages), 500);
  return out;
}

describe('the projected graph does not depend on where batches end', () => {
  it('one event per transaction gives the state a 500-event rebuild gives, a record before its entity included', async () => {
    const first = proposal(1, ['billing']); // [EntityCreated billing, RecordProposed about it]
    const retried = first.at(-1)!;
    const appends: LedgerEvent[][] = [
      [retried], // a producer's retry of the proposal, landed before its request's first copy
      first,
      proposal(2, ['billing', 'ledger']),
      [first[0]!], // the entity's creation again, alone
      proposal(3, []),
    ];
    for (const a of appends) await ledger.append(a);
    const messages = await messagesOf();
    expect(messages).toHaveLength(appends.flat().length);

    const deps = {
      store,
      topic,
      deadLetter: (d: Parameters<typeof ledger.deadLetter>[0]) => ledger.deadLetter(d),
      decode,
    };
    for (const m of messages) await applyBatch(deps, m.partition, [m]);
    const alone = await store.stateLines();

    const rebuilt = await rebuild(ledger, store, topic, 500, undefined, decode);
    expect(rebuilt.events).toBe(messages.length);
    const together = await store.stateLines();
    expect(stateDiff(alone.lines, together.lines)).toBe('0 lines only live, 0 only rebuilt');
    // The state hash streams the same dump: the digest of these lines, in any order.
    const hash = new MultisetHash();
    for (const line of [...together.lines].reverse()) hash.add(line);
    expect(await store.stateHash()).toEqual({
      hash: hash.digest(),
      nodes: together.nodes,
      relationships: together.relationships,
    });
    expect(rebuilt.hash).toBe(hash.digest());
  });
});
