import { describe, expect, it } from 'vitest';
import { BatchingEmbedder } from '../../src/adapters/embedders/batching.ts';
import type { Embedder } from '../../src/ports/embedder.ts';

/** A model that records each call and answers when released: [length of the text] as the vector. */
function gatedModel() {
  const calls: string[][] = [];
  const gates: Array<() => void> = [];
  let fail = false;
  const model: Embedder = {
    modelId: 'fake',
    dimensions: 1,
    embed: async (texts) => {
      calls.push([...texts]);
      await new Promise<void>((r) => gates.push(r));
      if (fail) throw new Error('model failed');
      return texts.map((t) => Float32Array.of(t.length));
    },
  };
  const releaseAll = async () => {
    for (let i = 0; i < 10; i++) {
      while (gates.length) gates.shift()!();
      await new Promise((r) => setImmediate(r));
    }
  };
  return { model, calls, releaseAll, setFail: (v: boolean) => (fail = v) };
}

describe('BatchingEmbedder', () => {
  it('an idle embedder sends the first request at once, alone', async () => {
    const m = gatedModel();
    const b = new BatchingEmbedder(m.model);
    const p = b.embed(['a']);
    await new Promise((r) => setImmediate(r));
    expect(m.calls).toEqual([['a']]);
    await m.releaseAll();
    expect(await p).toEqual([Float32Array.of(1)]);
  });

  it('requests arriving during a model call go together in the next call, each answered with its own vectors', async () => {
    const m = gatedModel();
    const b = new BatchingEmbedder(m.model);
    const first = b.embed(['a']);
    await new Promise((r) => setImmediate(r));
    const rest = [b.embed(['bb', 'ccc']), b.embed(['dddd']), b.embed(['eeeee'])];
    await m.releaseAll();
    expect(m.calls).toEqual([['a'], ['bb', 'ccc', 'dddd', 'eeeee']]);
    expect(await first).toEqual([Float32Array.of(1)]);
    expect(await Promise.all(rest)).toEqual([
      [Float32Array.of(2), Float32Array.of(3)],
      [Float32Array.of(4)],
      [Float32Array.of(5)],
    ]);
    expect(b.stats).toEqual({ calls: 2, texts: 5 });
  });

  it('a call holds at most maxTexts texts (a larger request still goes, alone)', async () => {
    const m = gatedModel();
    const b = new BatchingEmbedder(m.model, 3);
    const first = b.embed(['x']);
    await new Promise((r) => setImmediate(r));
    const waiting = [b.embed(['a', 'b']), b.embed(['c', 'd']), b.embed(['e', 'f', 'g', 'h'])];
    await m.releaseAll();
    await Promise.all([first, ...waiting]);
    expect(m.calls).toEqual([['x'], ['a', 'b'], ['c', 'd'], ['e', 'f', 'g', 'h']]);
  });

  it('a failed model call fails every request of that batch, and the next batch is tried afresh', async () => {
    const m = gatedModel();
    const b = new BatchingEmbedder(m.model);
    m.setFail(true);
    const p = b.embed(['a']).catch((e: unknown) => e);
    await new Promise((r) => setImmediate(r));
    const q = b.embed(['bb']).catch((e: unknown) => e);
    const r = b.embed(['ccc']).catch((e: unknown) => e);
    await m.releaseAll();
    expect(await p).toBeInstanceOf(Error);
    expect([await q, await r]).toEqual([expect.any(Error), expect.any(Error)]);
    m.setFail(false);
    const after = b.embed(['dddd']);
    await m.releaseAll();
    expect(await after).toEqual([Float32Array.of(4)]);
  });
});
