/**
 * all-MiniLM-L6-v2 on onnxruntime-node (CPU): WordPiece → transformer → mean pooling over the attention
 * mask → L2 normalization, i.e. what sentence-transformers does for this model (max_seq_length 256).
 *
 * The model directory is what `scripts/fetch-model.mjs` provisions: `model.onnx`, `vocab.txt` (or
 * `tokenizer.json`) and `manifest.json` (source package, version, SHA-256 of each file). Without a
 * manifest the model still loads and the modelId names the source `local`. The ONNX file's SHA-256 is
 * computed from the exact bytes handed to onnxruntime, so the modelId always names the weights in use.
 */
import { createHash } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { type Embedder, l2normalize } from '../../ports/embedder.ts';
import { DEFAULT_MAX_TOKENS, WordPieceTokenizer } from './wordpiece.ts';

export const MINILM_DIMENSIONS = 384;
const DEFAULT_BATCH = 32;

export interface OnnxEmbedderOptions {
  /** onnxruntime intra-op threads; default 1 (one embed call uses one core). */
  intraOpThreads?: number;
  /** Texts per session.run; default 32. */
  batchSize?: number;
  /** Sequence length including [CLS]/[SEP]; default 256. */
  maxTokens?: number;
}

export interface OnnxEmbedder extends Embedder {
  /** Files and where they came from, for status pages and logs. */
  readonly info: { readonly modelDir: string; readonly onnxSha256: string; readonly source: string };
  close(): Promise<void>;
}

interface Manifest {
  package?: string;
  version?: string;
  files?: Record<string, { sha256?: string }>;
}

const exists = (p: string): Promise<boolean> =>
  access(p).then(
    () => true,
    () => false,
  );

async function readManifest(modelDir: string): Promise<Manifest | undefined> {
  const p = join(modelDir, 'manifest.json');
  if (!(await exists(p))) return undefined;
  const m = JSON.parse(await readFile(p, 'utf8')) as unknown;
  if (!m || typeof m !== 'object') throw new Error(`${p} is not a JSON object`);
  return m as Manifest;
}

export async function createOnnxEmbedder(
  modelDir: string,
  opts: OnnxEmbedderOptions = {},
): Promise<OnnxEmbedder> {
  const threads = opts.intraOpThreads ?? 1;
  const batchSize = opts.batchSize ?? DEFAULT_BATCH;
  if (!Number.isInteger(threads) || threads < 1)
    throw new RangeError('intraOpThreads must be a positive integer');
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new RangeError('batchSize must be a positive integer');

  const onnxPath = join(modelDir, 'model.onnx');
  if (!(await exists(onnxPath))) {
    throw new Error(`embedding model not found at ${onnxPath}; run \`node scripts/fetch-model.mjs\``);
  }
  const vocabPath = (await exists(join(modelDir, 'vocab.txt')))
    ? join(modelDir, 'vocab.txt')
    : join(modelDir, 'tokenizer.json');
  const tokenizer = await WordPieceTokenizer.fromFile(vocabPath, {
    maxTokens: opts.maxTokens ?? DEFAULT_MAX_TOKENS,
  });

  const bytes = await readFile(onnxPath);
  const onnxSha256 = createHash('sha256').update(bytes).digest('hex');
  const manifest = await readManifest(modelDir);
  const pinned = manifest?.files?.['model.onnx']?.sha256;
  if (pinned && pinned !== onnxSha256) {
    throw new Error(
      `${onnxPath} has SHA-256 ${onnxSha256}, manifest says ${pinned}; re-run scripts/fetch-model.mjs`,
    );
  }
  const source = manifest?.package && manifest.version ? `${manifest.package}-${manifest.version}` : 'local';
  const modelId = `all-MiniLM-L6-v2@${source}#${onnxSha256.slice(0, 12)}`;

  const session = await ort.InferenceSession.create(bytes, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    logSeverityLevel: 3,
  });
  const inputNames = new Set(session.inputNames);
  for (const required of ['input_ids', 'attention_mask']) {
    if (!inputNames.has(required)) {
      await session.release();
      throw new Error(
        `${onnxPath}: model has no ${required} input (inputs: ${session.inputNames.join(', ')})`,
      );
    }
  }
  const outputName = session.outputNames.includes('last_hidden_state')
    ? 'last_hidden_state'
    : session.outputNames[0];
  if (outputName === undefined) throw new Error(`${onnxPath}: model has no outputs`);

  // One session.run at a time: concurrent callers interleave chunk by chunk, and CPU use stays at `threads`.
  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn, fn);
    queue = run.catch(() => undefined);
    return run;
  };
  let closed = false;

  async function runChunk(rows: readonly (readonly number[])[]): Promise<Float32Array[]> {
    const enc = tokenizer.padBatch(rows);
    const dims = [enc.batchSize, enc.seqLen];
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', enc.inputIds, dims),
      attention_mask: new ort.Tensor('int64', enc.attentionMask, dims),
    };
    if (inputNames.has('token_type_ids'))
      feeds['token_type_ids'] = new ort.Tensor('int64', enc.tokenTypeIds, dims);
    const results = await session.run(feeds, [outputName!]);
    const out = results[outputName!];
    if (!out || out.type !== 'float32') throw new Error(`${onnxPath}: unexpected output ${outputName}`);
    const data = out.data as Float32Array;
    const vectors: Float32Array[] = [];
    if (out.dims.length === 2) {
      // Already pooled (some exports add the pooling to the graph).
      const d = out.dims[1]!;
      for (let b = 0; b < enc.batchSize; b++) vectors.push(l2normalize(data.slice(b * d, (b + 1) * d)));
    } else {
      const [ob, os, d] = out.dims as readonly number[];
      if (ob !== enc.batchSize || os !== enc.seqLen || d === undefined) {
        throw new Error(`${onnxPath}: output dims [${out.dims.join(', ')}] do not match the batch`);
      }
      for (let b = 0; b < enc.batchSize; b++) {
        const v = new Float32Array(d);
        let count = 0;
        for (let t = 0; t < enc.seqLen; t++) {
          if (enc.attentionMask[b * enc.seqLen + t] === 0n) continue;
          count++;
          const off = (b * enc.seqLen + t) * d;
          for (let k = 0; k < d; k++) v[k] = v[k]! + data[off + k]!;
        }
        for (let k = 0; k < d; k++) v[k] = v[k]! / Math.max(count, 1);
        vectors.push(l2normalize(v));
      }
    }
    for (const t of Object.values(results)) t.dispose();
    return vectors;
  }

  return {
    modelId,
    dimensions: MINILM_DIMENSIONS,
    info: { modelDir, onnxSha256, source },
    async embed(texts: readonly string[]): Promise<Float32Array[]> {
      if (closed) throw new Error('embedder is closed');
      // Chunks of similar length waste less on padding; a text's vector does not depend on its batch-mates.
      const rows = texts.map((t) => tokenizer.encode(t));
      const order = rows.map((_, i) => i).sort((a, b) => rows[a]!.length - rows[b]!.length);
      const out = new Array<Float32Array>(texts.length);
      for (let i = 0; i < order.length; i += batchSize) {
        const idx = order.slice(i, i + batchSize);
        const vectors = await serialized(() => runChunk(idx.map((j) => rows[j]!)));
        idx.forEach((j, k) => {
          const v = vectors[k]!;
          if (v.length !== MINILM_DIMENSIONS) {
            throw new Error(
              `${onnxPath}: produced ${v.length}-dimensional vectors, expected ${MINILM_DIMENSIONS}`,
            );
          }
          out[j] = v;
        });
      }
      return out;
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await serialized(() => session.release());
    },
  };
}
