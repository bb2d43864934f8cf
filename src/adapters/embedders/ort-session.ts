import { Worker } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';

/**
 * An onnxruntime inference session, wherever it runs. onnxruntime-node's `session.run` computes
 * synchronously on the calling thread: on the API's thread, every query embedding (~7 ms with bge) and
 * write batch stops every other request for its whole length. `workerSession` runs it in a worker thread
 * (ort-worker.mjs); `callerSession` keeps it on the caller's thread (a tool with nothing else to serve).
 */
export interface TensorData {
  readonly type: string;
  readonly data: BigInt64Array | Float32Array;
  readonly dims: readonly number[];
}

export interface OrtSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, TensorData>, fetches: readonly string[]): Promise<Record<string, TensorData>>;
  release(): Promise<void>;
}

export type SessionOptions = ort.InferenceSession.SessionOptions;

export async function callerSession(bytes: Uint8Array, options: SessionOptions): Promise<OrtSession> {
  const session = await ort.InferenceSession.create(bytes, options);
  return {
    inputNames: session.inputNames,
    outputNames: session.outputNames,
    async run(feeds, fetches) {
      const tensors = Object.fromEntries(
        Object.entries(feeds).map(([k, t]) => [k, new ort.Tensor(t.type as 'int64', t.data, t.dims)]),
      );
      const results = await session.run(tensors, [...fetches]);
      const out: Record<string, TensorData> = {};
      for (const [k, t] of Object.entries(results)) {
        out[k] = { type: t.type, data: (t.data as Float32Array).slice(), dims: t.dims };
        t.dispose();
      }
      return out;
    },
    release: () => session.release(),
  };
}

type Reply =
  | { type: 'ready'; inputNames: string[]; outputNames: string[] }
  | { type: 'failed'; error: string }
  | { type: 'result'; id: number; out?: Record<string, TensorData>; error?: string }
  | { type: 'released'; id: number };

/** A worker that has loaded the model: the model's input and output names, and what it has not answered. */
interface Started {
  readonly worker: Worker;
  readonly names: { inputNames: string[]; outputNames: string[] };
  readonly pending: Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>;
}

/** One worker session's state: the worker that serves it (started or starting). */
interface WorkerState {
  readonly bytes: Uint8Array;
  readonly options: SessionOptions;
  ids: number;
  current: Promise<Started> | null;
}

/**
 * The session in a worker thread. Requests are answered in order by id; a worker that dies fails what it
 * was asked and the next run starts a new one. The worker keeps the process alive only while it has work.
 */
export async function workerSession(bytes: Uint8Array, options: SessionOptions): Promise<OrtSession> {
  const s: WorkerState = { bytes, options, ids: 0, current: null };
  s.current = start(s);
  const { names } = await s.current;
  return {
    inputNames: names.inputNames,
    outputNames: names.outputNames,
    async run(feeds, fetches) {
      const reply = await ask(s, { type: 'run', feeds, fetches: [...fetches] });
      if (reply.type !== 'result' || !reply.out)
        throw new Error(`onnxruntime worker: ${(reply as { error?: string }).error}`);
      return reply.out;
    },
    async release() {
      // Detached first: a run from here on starts a new worker instead of reaching one being released.
      const current = s.current;
      s.current = null;
      if (!current) return;
      const started = await current;
      await send(s, started, { type: 'release' });
      await started.worker.terminate();
    },
  };
}

/**
 * Starts a worker. Each worker has its own pending requests, and its death clears `current` only while it is
 * still the current one: a worker ended by release() cannot take down one a later run() has started.
 */
function start(s: WorkerState): Promise<Started> {
  const pending: Started['pending'] = new Map();
  const started = new Promise<Started>((resolve, reject) => {
    const worker = new Worker(new URL('./ort-worker.mjs', import.meta.url), {
      workerData: { bytes: s.bytes, options: s.options },
    });
    worker.unref();
    worker.on('message', (m: Reply) => {
      if (m.type === 'ready') resolve({ worker, names: m, pending });
      else if (m.type === 'failed') {
        // A model that cannot load: the worker is ended (its exit clears `current`, so a later call tries again).
        reject(new Error(`onnxruntime worker: ${m.error}`));
        void worker.terminate();
      } else {
        const p = pending.get(m.id);
        pending.delete(m.id);
        if (pending.size === 0) worker.unref();
        p?.resolve(m);
      }
    });
    const died = (e: Error) => {
      if (s.current === started) s.current = null;
      reject(e);
      for (const p of pending.values()) p.reject(e);
      pending.clear();
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`onnxruntime worker exited (code ${code})`)));
  });
  return started;
}

async function ask(s: WorkerState, message: object): Promise<Reply> {
  s.current ??= start(s);
  return send(s, await s.current, message);
}

function send(s: WorkerState, { worker, pending }: Started, message: object): Promise<Reply> {
  const id = ++s.ids;
  return new Promise<Reply>((resolve, reject) => {
    if (pending.size === 0) worker.ref();
    pending.set(id, { resolve, reject });
    worker.postMessage({ ...message, id });
  });
}
