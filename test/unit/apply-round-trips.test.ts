import { describe, expect, it } from 'vitest';
import { decidePropose, parseCommand, ProposeCommand } from '../../src/domain/commands.ts';
import { encodeEvent } from '../../src/domain/event-wire.ts';
import type { LoadedState, ProjectionStore, ProjectionTx } from '../../src/ports/graph.ts';
import type { LedgerMessage } from '../../src/ports/ledger.ts';
import { applyBatch } from '../../src/projector/apply.ts';
import { decideContext } from '../support/decide-context.ts';

/**
 * A batch's graph work goes out in two groups, each sent whole before any of it is awaited: the
 * checkpoint's lock with the loads behind it, then the writes with the checkpoint's move (ProjectionTx
 * runs statements in the order sent). One round trip per group instead of one per statement: under load
 * each round trip waits its turn on the event loop and the database (src/projector/apply.ts).
 */

const ctx = decideContext();
function proposal(i: number): Uint8Array {
  const cmd = parseCommand(ProposeCommand, {
    namespace: 'acme/platform',
    class: 'FACT',
    statement: {
      subject: `svc-${i}`,
      predicate: 'uses',
      object: 'postgres',
      text: `Service ${i} uses Postgres.`,
    },
    purpose: 'test',
    idempotencyKey: `k-${i}`,
  });
  const events = decidePropose(ctx, cmd, [], 'ACTIVE');
  return new TextEncoder().encode(encodeEvent(events.at(-1)!));
}

const nothing: LoadedState = {
  records: [],
  entities: [],
  receipts: [],
  episodes: [],
  grants: [],
  holds: [],
  findings: [],
};

/** A transaction that notes, for each call, which earlier calls were still unanswered when it was made. */
function recordingTx(checkpoint: bigint) {
  const calls: Array<{ name: string; whileOpen: string[] }> = [];
  const open = new Set<string>();
  const answer = <T>(name: string, value: T): Promise<T> => {
    calls.push({ name, whileOpen: [...open] });
    open.add(name);
    return new Promise((resolve) =>
      setTimeout(() => {
        open.delete(name);
        resolve(value);
      }, 5),
    );
  };
  const tx: ProjectionTx = {
    lockCheckpoint: () => answer('lock', checkpoint),
    load: () => answer('load', nothing),
    write: () => answer('write', undefined),
    setCheckpoint: () => answer('checkpoint', undefined),
  };
  const store = {
    projection: <T>(fn: (t: ProjectionTx) => Promise<T>) => fn(tx),
    checkpoints: () => Promise.resolve([]),
  } as unknown as ProjectionStore;
  return { calls, store };
}

const batch = (offsets: number[]): LedgerMessage[] =>
  offsets.map((o) => ({ partition: 0, offset: String(o), key: 'acme', value: proposal(o) }));

const deps = (store: ProjectionStore) => ({ store, topic: 't', deadLetter: () => Promise.resolve() });

describe('applyBatch sends a batch in two round trips', () => {
  it('the loads go out behind the lock, and the writes with the checkpoint, each group unawaited', async () => {
    const { calls, store } = recordingTx(-1n);
    const res = await applyBatch(deps(store), 0, batch([0, 1, 2]));
    expect(res.applied).toBe(3);
    expect(calls).toEqual([
      { name: 'lock', whileOpen: [] },
      { name: 'load', whileOpen: ['lock'] },
      { name: 'write', whileOpen: [] },
      { name: 'checkpoint', whileOpen: ['write'] },
    ]);
  });

  it('events the lock shows applied were loaded with the rest but are neither folded nor written', async () => {
    const { calls, store } = recordingTx(5n);
    const res = await applyBatch(deps(store), 0, batch([4, 5]));
    expect(res).toMatchObject({ applied: 0, skipped: 2 });
    expect(calls.map((c) => c.name)).toEqual(['lock', 'load']);
  });
});
