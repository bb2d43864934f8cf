import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureModel } from '../../scripts/fetch-model.mjs';
import { createOnnxEmbedder, type OnnxEmbedder } from '../../src/adapters/embedders/onnx-embedder.ts';
import { workerSession, type TensorData } from '../../src/adapters/embedders/ort-session.ts';

/**
 * The local model runs in a worker thread (ort-session.ts): the same vectors as on the caller's thread,
 * and the caller's event loop keeps turning while a batch is embedded — onnxruntime-node computes
 * synchronously on whichever thread calls it.
 */

let worker: OnnxEmbedder;
let caller: OnnxEmbedder;
const texts = Array.from({ length: 32 }, (_, i) =>
  `record ${i}: the payments service keeps its ledger in postgres and replays it nightly `.repeat(6),
);

beforeAll(async () => {
  const modelDir = await ensureModel({ model: 'all-MiniLM-L6-v2', log: false });
  worker = await createOnnxEmbedder(modelDir);
  caller = await createOnnxEmbedder(modelDir, { thread: 'caller' });
}, 180_000);

afterAll(async () => {
  await worker?.close();
  await caller?.close();
});

/** How many times a 2 ms timer fired while `embedder` embedded the batch, and how long that took. */
async function ticksDuring(embedder: OnnxEmbedder): Promise<{ ticks: number; ms: number }> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 2);
  const t0 = performance.now();
  await embedder.embed(texts);
  const ms = performance.now() - t0;
  clearInterval(timer);
  return { ticks, ms };
}

describe('the onnxruntime session in a worker thread', () => {
  it('gives exactly the vectors the caller-thread session gives', async () => {
    const [a, b] = await Promise.all([worker.embed(texts.slice(0, 5)), caller.embed(texts.slice(0, 5))]);
    expect(a.map((v) => [...v])).toEqual(b.map((v) => [...v]));
    expect(worker.modelId).toBe(caller.modelId);
    expect(worker.batchInvariant).toBe(caller.batchInvariant);
  });

  it("leaves the caller's event loop free while it embeds a batch; the caller thread does not", async () => {
    const onWorker = await ticksDuring(worker);
    const onCaller = await ticksDuring(caller);
    // At least one tick per 20 ms of embedding where the loop is free; the caller thread blocks it for the
    // whole batch (one session.run), so the timer barely fires.
    expect(onWorker.ticks).toBeGreaterThanOrEqual(Math.floor(onWorker.ms / 20));
    expect(onCaller.ticks).toBeLessThan(Math.floor(onCaller.ms / 20));
    // It measures ticks against the batch's own length, not time: a loaded machine only makes both longer.
  }, 60_000);

  it('a run during release() is answered by a new worker, not the one being released, and so is the run after it', async () => {
    const modelDir = await ensureModel({ model: 'all-MiniLM-L6-v2', log: false });
    const session = await workerSession(new Uint8Array(await readFile(join(modelDir, 'model.onnx'))), {});
    const ids = (xs: bigint[]): TensorData => ({ type: 'int64', data: new BigInt64Array(xs), dims: [1, 3] });
    const feeds = {
      input_ids: ids([101n, 2000n, 102n]),
      attention_mask: ids([1n, 1n, 1n]),
      token_type_ids: ids([0n, 0n, 0n]),
    };
    for (let round = 0; round < 3; round++) {
      const releasing = session.release();
      const during = session.run(feeds, session.outputNames).then(
        () => 'answered',
        (e: Error) => e.message,
      );
      await releasing;
      expect(await during).toBe('answered');
      // The worker ended by release() must not take the new one (or what it was asked) down with it.
      const after = await session.run(feeds, session.outputNames);
      expect(after[session.outputNames[0]!]!.dims[0]).toBe(1);
    }
    await session.release();
  }, 60_000);

  it('a closed embedder refuses to embed', async () => {
    const modelDir = await ensureModel({ model: 'all-MiniLM-L6-v2', log: false });
    const e = await createOnnxEmbedder(modelDir);
    await e.close();
    await expect(e.embed(['x'])).rejects.toThrow(/closed/);
  });

  it("a model the worker cannot load fails creation with the worker's error", async () => {
    const modelDir = await ensureModel({ model: 'all-MiniLM-L6-v2', log: false });
    const broken = await mkdtemp(join(tmpdir(), 'muninn-broken-model-'));
    try {
      await copyFile(join(modelDir, 'vocab.txt'), join(broken, 'vocab.txt'));
      await writeFile(join(broken, 'model.onnx'), 'not an onnx model');
      await expect(createOnnxEmbedder(broken)).rejects.toThrow(/onnxruntime worker/);
    } finally {
      await rm(broken, { recursive: true, force: true });
    }
  });
});
