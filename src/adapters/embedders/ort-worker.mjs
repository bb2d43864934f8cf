// One onnxruntime session in a worker thread (ort-session.ts starts it). onnxruntime-node runs
// `session.run` synchronously on the thread that calls it; here that is this worker, so the API's event
// loop keeps serving while a query or a write batch is embedded. Plain JavaScript: a worker does not
// inherit the TypeScript loader of the thread that starts it under every runner (vitest, tsx).
import { parentPort, workerData } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';

const port = parentPort;
if (!port) throw new Error('ort-worker.mjs runs as a worker thread');

let session;
try {
  session = await ort.InferenceSession.create(workerData.bytes, workerData.options);
  port.postMessage({ type: 'ready', inputNames: session.inputNames, outputNames: session.outputNames });
} catch (e) {
  port.postMessage({ type: 'failed', error: String(e?.message ?? e) });
}

port.on('message', async (m) => {
  if (m.type === 'release') {
    // Gone before the await: a run that arrives meanwhile must not reach a session being released (its
    // native error would end the whole process).
    const released = session;
    session = undefined;
    await released?.release();
    port.postMessage({ type: 'released', id: m.id });
    return;
  }
  if (!session) {
    port.postMessage({ type: 'result', id: m.id, error: 'the session was released' });
    return;
  }
  try {
    const feeds = {};
    for (const [name, t] of Object.entries(m.feeds)) feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
    const results = await session.run(feeds, m.fetches);
    const out = {};
    const transfer = [];
    for (const [name, t] of Object.entries(results)) {
      // A copy the worker owns, handed over without another copy (the session's buffer stays native).
      const data = t.data.slice();
      out[name] = { type: t.type, data, dims: t.dims };
      transfer.push(data.buffer);
      t.dispose();
    }
    port.postMessage({ type: 'result', id: m.id, out }, transfer);
  } catch (e) {
    port.postMessage({ type: 'result', id: m.id, error: String(e?.message ?? e) });
  }
});
