import { afterEach, describe, expect, it, vi } from 'vitest';
import type { GraphStore } from '../../src/ports/graph.ts';
import type { Ledger, LedgerSubscription } from '../../src/ports/ledger.ts';
import { silentLogger } from '../../src/ports/logger.ts';
import { Projector } from '../../src/projector/projector.ts';

/**
 * The Kafka client gives up on a consumer for good on some broker errors ("Failed to find group
 * coordinator" while the broker loads its group metadata). The projector must then replace it with a
 * new member of the group, not live on without consuming. A fake ledger port stands in for the client
 * (the projector's own loop is under test, not KafkaJS).
 */

interface FakeSub extends LedgerSubscription {
  crash(e: Error): void;
  stopped: boolean;
}

function fakeLedger(failJoins = 0) {
  const subs: FakeSub[] = [];
  let joins = 0;
  const ledger = {
    deadLetter: async () => undefined,
    consume: async () => {
      if (++joins <= failJoins) throw new Error('broker unreachable');
      let crash!: (e: Error) => void;
      const done = new Promise<void>((_, reject) => (crash = reject));
      const sub: FakeSub = {
        stopped: false,
        crash: (e) => crash(e),
        done,
        joined: () => !sub.stopped,
        stop: async () => void (sub.stopped = true),
      };
      subs.push(sub);
      return sub;
    },
  } as unknown as Ledger;
  return { ledger, subs, joins: () => joins };
}

function projectorOn(ledger: Ledger) {
  return new Projector({
    ledger,
    store: { checkpoints: async () => [] } as unknown as GraphStore,
    topic: 't',
    groupId: 'g',
    sessionTimeoutMs: 10_000,
    batchMax: 10,
    logger: silentLogger,
  });
}

describe('a projector whose consumer crashes for good', () => {
  afterEach(() => vi.useRealTimers());

  it('is failed (unready) at once, then joins again with a new consumer and is ready', async () => {
    vi.useFakeTimers();
    const { ledger, subs } = fakeLedger();
    const projector = projectorOn(ledger);
    await projector.start();
    expect(projector.health().ready).toBe(true);

    subs[0]!.crash(new Error('Failed to find group coordinator'));
    await vi.advanceTimersByTimeAsync(0);
    expect(projector.state).toMatchObject({ kind: 'failed', error: 'Failed to find group coordinator' });
    expect(projector.health().ready).toBe(false);
    expect(subs[0]!.stopped).toBe(true);

    await vi.advanceTimersByTimeAsync(Projector.REPLACE_MAX_MS);
    expect(subs).toHaveLength(2);
    expect(projector.state.kind).toBe('running');
    expect(projector.health().ready).toBe(true);

    // A second crash later is handled the same way.
    subs[1]!.crash(new Error('again'));
    await vi.advanceTimersByTimeAsync(Projector.REPLACE_MAX_MS);
    expect(subs).toHaveLength(3);
    expect(projector.state.kind).toBe('running');
    await projector.stop();
  });

  it('keeps trying while the broker refuses new members, with pauses that grow to the cap', async () => {
    vi.useFakeTimers();
    const { ledger, subs, joins } = fakeLedger();
    const projector = projectorOn(ledger);
    await projector.start();
    const refusing = fakeLedger(6);
    // From now on the first six joins fail: pauses of 1, 2, 4, 8, 16 and then 30 s (the cap) apart.
    (ledger as { consume: Ledger['consume'] }).consume = refusing.ledger.consume;
    subs[0]!.crash(new Error('crash'));
    await vi.advanceTimersByTimeAsync(1_000 + 2_000 + 4_000 + 8_000 + 16_000 + 30_000);
    expect(refusing.joins()).toBe(6);
    expect(projector.state).toMatchObject({ kind: 'failed', error: 'broker unreachable' });
    await vi.advanceTimersByTimeAsync(Projector.REPLACE_MAX_MS - 1);
    expect(refusing.joins()).toBe(6);
    await vi.advanceTimersByTimeAsync(1);
    expect(refusing.joins()).toBe(7);
    expect(projector.state.kind).toBe('running');
    expect(joins()).toBe(1);
    await projector.stop();
  });

  it('stopped while it waits to replace the consumer, it stays stopped', async () => {
    vi.useFakeTimers();
    const { ledger, subs } = fakeLedger();
    const projector = projectorOn(ledger);
    await projector.start();
    subs[0]!.crash(new Error('crash'));
    await vi.advanceTimersByTimeAsync(0);
    await projector.stop();
    await vi.advanceTimersByTimeAsync(10 * Projector.REPLACE_MAX_MS);
    expect(subs).toHaveLength(1);
    expect(projector.state.kind).toBe('stopped');
  });
});
