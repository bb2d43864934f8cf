/**
 * A BERT-family sentence embedder on onnxruntime-node (CPU): WordPiece → transformer → pooling → L2
 * normalization, i.e. what sentence-transformers does for the model (our token cap: 256). Two models are
 * provisioned by `scripts/fetch-model.mjs` (MUNINN_LOCAL_MODEL picks one): all-MiniLM-L6-v2 pools by the
 * mean over the attention mask, bge-small-en-v1.5 by the [CLS] token's hidden state. Both share
 * bert-base-uncased's WordPiece vocabulary. bge-small-en-v1.5 is used without its optional query
 * instruction (v1.5 retrieves well without it), so queries and records are embedded alike and the
 * Embedder port stays `embed(texts)`.
 *
 * The model directory holds `model.onnx`, `vocab.txt` (or `tokenizer.json`) and `manifest.json` (model
 * name, pooling, dimensions, source package, version, SHA-256 of each file). Without a manifest the
 * model still loads with mean pooling and 384 dimensions, is named after its directory, and the modelId
 * names the source `local`. The ONNX file's SHA-256 is computed from the exact bytes handed to
 * onnxruntime, so the modelId (`<model>@<package>-<version>#<sha256 prefix>`) always names the weights
 * in use.
 */
import { createHash } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { type Embedder, l2normalize } from '../../ports/embedder.ts';
import { callerSession, workerSession, type OrtSession, type TensorData } from './ort-session.ts';
import { DEFAULT_MAX_TOKENS, WordPieceTokenizer } from './wordpiece.ts';

/** The dimensions of both provisioned models, and the default when a manifest names none. */
export const DEFAULT_DIMENSIONS = 384;
const DEFAULT_BATCH = 32;

export type Pooling = 'mean' | 'cls';

export interface OnnxEmbedderOptions {
  /** onnxruntime intra-op threads; default 1 (one embed call uses one core). */
  intraOpThreads?: number;
  /** Texts per session.run; default 32. */
  batchSize?: number;
  /** Sequence length including [CLS]/[SEP]; default 256. */
  maxTokens?: number;
  /**
   * Where the model runs: 'worker' (default), a worker thread, so the caller's event loop keeps serving
   * while it computes; 'caller', the calling thread (onnxruntime-node computes synchronously there).
   */
  thread?: 'worker' | 'caller';
}

export interface OnnxEmbedder extends Embedder {
  /** Files and where they came from, for status pages and logs. */
  readonly info: {
    readonly modelDir: string;
    readonly onnxSha256: string;
    readonly source: string;
    readonly model: string;
    readonly pooling: Pooling;
  };
  close(): Promise<void>;
}

export interface ModelManifest {
  model?: string;
  package?: string;
  version?: string;
  pooling: Pooling;
  dimensions: number;
  files?: Record<string, { sha256?: string }>;
}

const exists = (p: string): Promise<boolean> =>
  access(p).then(
    () => true,
    () => false,
  );

/** Parses manifest.json; pooling defaults to 'mean' and dimensions to 384 (older manifests named neither). */
export function parseManifest(text: string, where = 'manifest.json'): ModelManifest {
  const m = JSON.parse(text) as unknown;
  if (!m || typeof m !== 'object' || Array.isArray(m)) throw new Error(`${where} is not a JSON object`);
  const o = m as Record<string, unknown>;
  const optStr = (k: string): string | undefined => {
    const v = o[k];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string' || v === '') throw new Error(`${where}: ${k} must be a non-empty string`);
    return v;
  };
  const pooling = o['pooling'] ?? 'mean';
  if (pooling !== 'mean' && pooling !== 'cls')
    throw new Error(`${where}: pooling must be "mean" or "cls", not ${JSON.stringify(pooling)}`);
  const dimensions = o['dimensions'] ?? DEFAULT_DIMENSIONS;
  if (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1)
    throw new Error(`${where}: dimensions must be a positive integer`);
  const files = o['files'];
  if (files !== undefined && (typeof files !== 'object' || files === null || Array.isArray(files)))
    throw new Error(`${where}: files must be an object`);
  return {
    model: optStr('model'),
    package: optStr('package'),
    version: optStr('version'),
    pooling,
    dimensions,
    files: files as ModelManifest['files'],
  };
}

async function readManifest(modelDir: string): Promise<ModelManifest | undefined> {
  const p = join(modelDir, 'manifest.json');
  if (!(await exists(p))) return undefined;
  return parseManifest(await readFile(p, 'utf8'), p);
}

/**
 * One L2-normalised vector per row of a [batch, seq, dim] hidden-state tensor (row-major). 'cls' takes
 * position 0 ([CLS]); 'mean' averages the positions whose attention mask is 1 (padding does not count).
 */
export function poolHiddenStates(
  data: Float32Array,
  dims: readonly [number, number, number],
  attentionMask: BigInt64Array,
  pooling: Pooling,
): Float32Array[] {
  const [batch, seq, d] = dims;
  if (data.length !== batch * seq * d || attentionMask.length !== batch * seq)
    throw new RangeError(`hidden states [${dims.join(', ')}] do not match the data or the mask`);
  const vectors: Float32Array[] = [];
  for (let b = 0; b < batch; b++) {
    if (pooling === 'cls') {
      const off = b * seq * d;
      vectors.push(l2normalize(data.slice(off, off + d)));
      continue;
    }
    const v = new Float32Array(d);
    let count = 0;
    for (let t = 0; t < seq; t++) {
      if (attentionMask[b * seq + t] === 0n) continue;
      count++;
      const off = (b * seq + t) * d;
      for (let k = 0; k < d; k++) v[k] = v[k]! + data[off + k]!;
    }
    for (let k = 0; k < d; k++) v[k] = v[k]! / Math.max(count, 1);
    vectors.push(l2normalize(v));
  }
  return vectors;
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

  const files = await readModelFiles(modelDir, opts.maxTokens ?? DEFAULT_MAX_TOKENS);
  const { onnxSha256, source, model, pooling, dimensions } = files;
  const modelId = `${model}@${source}#${onnxSha256.slice(0, 12)}`;
  const m = await openModel(files, threads, opts.thread);

  // One session.run at a time: concurrent callers interleave chunk by chunk, and CPU use stays at `threads`.
  const serialized = serializer();
  let closed = false;
  const batchInvariant = await isBatchInvariant(m, serialized);

  return {
    modelId,
    dimensions,
    batchInvariant,
    info: { modelDir, onnxSha256, source, model, pooling },
    async embed(texts: readonly string[]): Promise<Float32Array[]> {
      if (closed) throw new Error('embedder is closed');
      return embedTexts(m, serialized, batchSize, texts);
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await serialized(() => m.session.release());
    },
  };
}

/** The model directory's files, read and checked: the tokenizer, the ONNX bytes and what names them. */
interface ModelFiles {
  readonly onnxPath: string;
  readonly tokenizer: WordPieceTokenizer;
  readonly bytes: Uint8Array;
  readonly onnxSha256: string;
  readonly source: string;
  readonly model: string;
  readonly pooling: Pooling;
  readonly dimensions: number;
}

async function readModelFiles(modelDir: string, maxTokens: number): Promise<ModelFiles> {
  const onnxPath = join(modelDir, 'model.onnx');
  if (!(await exists(onnxPath))) {
    throw new Error(`embedding model not found at ${onnxPath}; run \`node scripts/fetch-model.mjs\``);
  }
  const vocabPath = (await exists(join(modelDir, 'vocab.txt')))
    ? join(modelDir, 'vocab.txt')
    : join(modelDir, 'tokenizer.json');
  const tokenizer = await WordPieceTokenizer.fromFile(vocabPath, { maxTokens });

  const bytes = await readFile(onnxPath);
  const onnxSha256 = createHash('sha256').update(bytes).digest('hex');
  const manifest = await readManifest(modelDir);
  const pinned = manifest?.files?.['model.onnx']?.sha256;
  if (pinned && pinned !== onnxSha256) {
    throw new Error(
      `${onnxPath} has SHA-256 ${onnxSha256}, manifest says ${pinned}; re-run scripts/fetch-model.mjs`,
    );
  }
  return {
    onnxPath,
    tokenizer,
    bytes,
    onnxSha256,
    source: manifest?.package && manifest.version ? `${manifest.package}-${manifest.version}` : 'local',
    model: manifest?.model ?? basename(resolve(modelDir)),
    pooling: manifest?.pooling ?? 'mean',
    dimensions: manifest?.dimensions ?? DEFAULT_DIMENSIONS,
  };
}

/** The files with their session, and the session's names for what goes in and comes out. */
interface Model {
  readonly files: ModelFiles;
  readonly session: OrtSession;
  readonly inputNames: ReadonlySet<string>;
  readonly outputName: string;
}

async function openModel(
  files: ModelFiles,
  threads: number,
  thread: OnnxEmbedderOptions['thread'],
): Promise<Model> {
  const { onnxPath } = files;
  const session = await (thread === 'caller' ? callerSession : workerSession)(files.bytes, {
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
  return { files, session, inputNames, outputName };
}

type Serialized = <T>(fn: () => Promise<T>) => Promise<T>;

/** Runs the functions it is given one at a time, each once the one before has settled. */
function serializer(): Serialized {
  let queue: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn, fn);
    queue = run.catch(() => undefined);
    return run;
  };
}

async function runChunk(m: Model, rows: readonly (readonly number[])[]): Promise<Float32Array[]> {
  const { onnxPath } = m.files;
  const enc = m.files.tokenizer.padBatch(rows);
  const dims = [enc.batchSize, enc.seqLen];
  const feeds: Record<string, TensorData> = {
    input_ids: { type: 'int64', data: enc.inputIds, dims },
    attention_mask: { type: 'int64', data: enc.attentionMask, dims },
  };
  if (m.inputNames.has('token_type_ids'))
    feeds['token_type_ids'] = { type: 'int64', data: enc.tokenTypeIds, dims };
  const results = await m.session.run(feeds, [m.outputName]);
  const out = results[m.outputName];
  if (!out || out.type !== 'float32') throw new Error(`${onnxPath}: unexpected output ${m.outputName}`);
  const data = out.data as Float32Array;
  let vectors: Float32Array[];
  if (out.dims.length === 2) {
    // Already pooled (some exports add the pooling to the graph).
    const d = out.dims[1]!;
    vectors = [];
    for (let b = 0; b < enc.batchSize; b++) vectors.push(l2normalize(data.slice(b * d, (b + 1) * d)));
  } else {
    const [ob, os, d] = out.dims as readonly number[];
    if (ob !== enc.batchSize || os !== enc.seqLen || d === undefined) {
      throw new Error(`${onnxPath}: output dims [${out.dims.join(', ')}] do not match the batch`);
    }
    vectors = poolHiddenStates(data, [ob, os, d], enc.attentionMask, m.files.pooling);
  }
  return vectors;
}

/**
 * Whether a text's vector stays put when a longer batch-mate joins it (padding masked out): exactly so
 * for all-MiniLM-L6-v2; bge's int8 export quantizes activations per batch, and its vectors move.
 */
async function isBatchInvariant(m: Model, serialized: Serialized): Promise<boolean> {
  const { tokenizer } = m.files;
  const probe = tokenizer.encode('muninn probe: the ledger is the source of truth.');
  const mate = tokenizer.encode('a longer batch-mate, '.repeat(12));
  const [alone] = await serialized(() => runChunk(m, [probe]));
  const [, mated] = await serialized(() => runChunk(m, [mate, probe]));
  return alone!.every((x, i) => Math.abs(x - mated![i]!) < 1e-5);
}

async function embedTexts(
  m: Model,
  serialized: Serialized,
  batchSize: number,
  texts: readonly string[],
): Promise<Float32Array[]> {
  const { onnxPath, dimensions } = m.files;
  // Chunks of similar length waste less on padding. Padding is masked out, so a text's vector does not
  // depend on its batch-mates — exactly for all-MiniLM-L6-v2; bge's int8 export quantizes activations
  // per batch, so there it moves slightly (cosine ≈ 0.996).
  const rows = texts.map((t) => m.files.tokenizer.encode(t));
  const order = rows.map((_, i) => i).sort((a, b) => rows[a]!.length - rows[b]!.length);
  const out = new Array<Float32Array>(texts.length);
  for (let i = 0; i < order.length; i += batchSize) {
    const idx = order.slice(i, i + batchSize);
    const vectors = await serialized(() =>
      runChunk(
        m,
        idx.map((j) => rows[j]!),
      ),
    );
    idx.forEach((j, k) => {
      const v = vectors[k]!;
      if (v.length !== dimensions) {
        throw new Error(`${onnxPath}: produced ${v.length}-dimensional vectors, expected ${dimensions}`);
      }
      out[j] = v;
    });
  }
  return out;
}
