import { describe, expect, it } from 'vitest';
import { Coalesced } from '../../src/adapters/neo4j/coalesce.ts';

/** A readMany that records each call's keys and answers every key with its double. */
function doubling() {
  const calls: number[][] = [];
  const c = new Coalesced<number, number>(
    (keys) => {
      calls.push([...keys]);
      return Promise.resolve(keys.map((k) => 2 * k));
    },
    (k) => String(k),
    4,
  );
  return { c, calls };
}

describe('Coalesced point reads', () => {
  it('reads keys asked for in the same turn with one call, each caller getting its own answer', async () => {
    const { c, calls } = doubling();
    await expect(Promise.all([c.read(1), c.read(2), c.read(3)])).resolves.toEqual([2, 4, 6]);
    expect(calls).toEqual([[1, 2, 3]]);
  });

  it('reads an equal key once per call, answering every caller that asked for it', async () => {
    const { c, calls } = doubling();
    await expect(Promise.all([c.read(5), c.read(5), c.read(7)])).resolves.toEqual([10, 10, 14]);
    expect(calls).toEqual([[5, 7]]);
  });

  it('sends a full batch at once and the rest after the turn', async () => {
    const { c, calls } = doubling();
    await expect(Promise.all([1, 2, 3, 4, 5, 6].map((k) => c.read(k)))).resolves.toEqual([
      2, 4, 6, 8, 10, 12,
    ]);
    expect(calls).toEqual([
      [1, 2, 3, 4],
      [5, 6],
    ]);
  });

  it('keys asked for in a later turn go in a later call', async () => {
    const { c, calls } = doubling();
    await c.read(1);
    await c.read(2);
    expect(calls).toEqual([[1], [2]]);
  });

  it('a failed read fails every caller of that call, and the next call starts clean', async () => {
    let fail = true;
    const c = new Coalesced<number, number>(
      (keys) => (fail ? Promise.reject(new Error('graph down')) : Promise.resolve(keys.map((k) => k))),
      (k) => String(k),
    );
    const both = [c.read(1), c.read(2)].map((p) => p.catch((e: Error) => e.message));
    await expect(Promise.all(both)).resolves.toEqual(['graph down', 'graph down']);
    fail = false;
    await expect(c.read(3)).resolves.toBe(3);
  });

  it('without a key identity every call is read as its own key, equal or not', async () => {
    const calls: number[][] = [];
    const c = new Coalesced<number, number>((keys) => {
      calls.push([...keys]);
      return Promise.resolve(keys.map((k) => k + 1));
    });
    await expect(Promise.all([c.read(1), c.read(1)])).resolves.toEqual([2, 2]);
    expect(calls).toEqual([[1, 1]]);
  });
});
