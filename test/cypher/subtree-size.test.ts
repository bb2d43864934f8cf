import { afterEach, describe, expect, it, vi } from 'vitest';
import { SubtreeSizes } from '../../src/adapters/neo4j/subtree-size.ts';
import { recordingExecutor } from './recording-executor.ts';

/**
 * A request's record count is read once, reused for TTL_MS, and then recounted in the background: the
 * recall that finds it old is answered with the old count at once, and the next one gets the new count.
 */

afterEach(() => vi.useRealTimers());

/** An executor whose count answer can be changed between reads. */
function counting(first: number) {
  const answers = { 'recall.size': [{ c: first }] };
  const db = recordingExecutor(answers);
  const reads = () => db.sent.filter((s) => s.op === 'recall.size').length;
  return { db, reads, setCount: (c: number) => (answers['recall.size'] = [{ c }]) };
}

describe('SubtreeSizes', () => {
  it('reads a namespace once within TTL_MS', async () => {
    const { db, reads } = counting(120);
    const sizes = new SubtreeSizes(db);
    expect(await sizes.of('t', 'acme/eng')).toBe(120);
    expect(await sizes.of('t', 'acme/eng')).toBe(120);
    expect(reads()).toBe(1);
    expect(await sizes.of('t', 'acme/ops')).toBe(120);
    expect(reads()).toBe(2);
  });

  it('past TTL_MS: answers the old count at once, recounts once in the background, then answers the new one', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { db, reads, setCount } = counting(120);
    const sizes = new SubtreeSizes(db);
    expect(await sizes.of('t', 'acme/eng')).toBe(120);
    setCount(4_000);
    vi.setSystemTime(Date.now() + SubtreeSizes.TTL_MS + 1);
    const [a, b] = await Promise.all([sizes.of('t', 'acme/eng'), sizes.of('t', 'acme/eng')]);
    expect([a, b]).toEqual([120, 120]);
    await new Promise((r) => setImmediate(r));
    expect(reads()).toBe(2);
    expect(await sizes.of('t', 'acme/eng')).toBe(4_000);
    expect(reads()).toBe(2);
  });
});
