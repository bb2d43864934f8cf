import type { Embedder } from '../../ports/embedder.ts';

type Closable = Embedder & { close?: () => Promise<void> };

interface Waiting {
  readonly texts: readonly string[];
  readonly resolve: (v: Float32Array[]) => void;
  readonly reject: (e: unknown) => void;
}

/**
 * Micro-batching across concurrent requests: while one model call runs, the texts of every request that
 * arrives meanwhile wait and then go to the model together, as one call (up to `maxTexts`). An idle
 * embedder adds no delay: the first request is sent at once. 64 writers proposing one statement each thus
 * cost a handful of model calls instead of 64, which is where a CPU-bound local model spends its time
 * (a batch of 32 runs several times faster per text than 32 calls of one).
 * A text's vector does not depend on its batch-mates (the embedders' contract), so batching changes no
 * decision; and every vector is recorded in its event, so a replay never embeds again.
 */
export class BatchingEmbedder implements Closable {
  private readonly queue: Waiting[] = [];
  private running = false;
  /** Model calls and texts sent, for the benchmark's average batch size. */
  readonly stats = { calls: 0, texts: 0 };

  constructor(
    private readonly inner: Closable,
    private readonly maxTexts = 128,
  ) {}

  get modelId(): string {
    return this.inner.modelId;
  }

  get dimensions(): number {
    return this.inner.dimensions;
  }

  get batchInvariant(): boolean | undefined {
    return this.inner.batchInvariant;
  }

  embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.queue.push({ texts, resolve, reject });
      void this.drain();
    });
  }

  close(): Promise<void> {
    return this.inner.close?.() ?? Promise.resolve();
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.take();
        const all = batch.flatMap((w) => w.texts);
        this.stats.calls++;
        this.stats.texts += all.length;
        try {
          const vectors = await this.inner.embed(all);
          let at = 0;
          for (const w of batch) {
            w.resolve(vectors.slice(at, at + w.texts.length));
            at += w.texts.length;
          }
        } catch (e) {
          for (const w of batch) w.reject(e);
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** The waiting requests that fit in one call, oldest first (always at least one, whatever its size). */
  private take(): Waiting[] {
    const batch = [this.queue.shift()!];
    let n = batch[0]!.texts.length;
    while (this.queue.length > 0 && n + this.queue[0]!.texts.length <= this.maxTexts) {
      const w = this.queue.shift()!;
      n += w.texts.length;
      batch.push(w);
    }
    return batch;
  }
}
