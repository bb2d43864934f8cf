import { afterEach, describe, expect, it, vi } from 'vitest';
import { ScopeVectors } from '../../src/adapters/neo4j/scope-vectors.ts';
import { StampSettling } from '../../src/adapters/neo4j/stamp-settling.ts';
import type { ArmQuery } from '../../src/ports/graph.ts';
import { recordingExecutor } from './recording-executor.ts';

/** Stamps trusted as soon as read: these cases are about what is loaded and held, not when a stamp settles. */
const atOnce = () => new StampSettling(() => Date.now(), 0);

/**
 * How long a process holds a namespace's vectors (scope-vectors.ts): a shard in use is loaded once and
 * then only brought up to date; one unused for IDLE_MS is dropped by the sweep, so the next recall there
 * loads it whole again — and a vector erased meanwhile is not held by a process that stopped recalling.
 */
const answers = {
  'recall.vectorStamps': [{ i: 0, ns: 'acme/eng', epoch: 'e1', seq: 1 }],
  'recall.vectorLoad': [{ tenant: 't1', ns: 'acme/eng', id: 'r1', model: 'm1', vector: [1, 0] }],
  'recall.vectorVisible': [{ id: 'r1' }],
};
const arm: ArmQuery = {
  scope: { tenant: 't1', grants: [{ root: null, maxSensitivity: 'INTERNAL' }] },
  namespace: 'acme/eng',
  classes: null,
  validAt: '2026-01-01T00:00:00.000Z',
  knownAt: null,
  k: 10,
};
const loads = (db: ReturnType<typeof recordingExecutor>) =>
  db.sent.filter((s) => s.op === 'recall.vectorLoad').map((s) => s.params['loads']);

afterEach(() => {
  vi.useRealTimers();
});

describe('vectors held in process are dropped when idle', () => {
  it('a shard in use is loaded once; unused for IDLE_MS it is dropped and loaded whole again', async () => {
    // setImmediate stays real: the stamp read is sent after the turn it was asked in (coalesce.ts).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    const db = recordingExecutor(answers);
    const memory = new ScopeVectors(db, 1000, atOnce());
    expect(await memory.nearest(arm, [1, 0], 'm1')).toEqual(['r1']);
    vi.advanceTimersByTime(ScopeVectors.IDLE_MS / 2);
    await memory.nearest(arm, [1, 0], 'm1');
    expect(loads(db)).toEqual([[{ tenant: 't1', ns: 'acme/eng', since: -1 }]]);
    vi.advanceTimersByTime(ScopeVectors.IDLE_MS * 1.5);
    await memory.nearest(arm, [1, 0], 'm1');
    expect(loads(db)).toEqual([
      [{ tenant: 't1', ns: 'acme/eng', since: -1 }],
      [{ tenant: 't1', ns: 'acme/eng', since: -1 }],
    ]);
  });
});
