// The soak's view of the Muninn child's live heap. RSS and a heap-used gauge sampled at random moments
// both saw-tooth by 100+ MiB (garbage waits for the next collection, V8 and the allocator keep freed
// pages), so neither can say whether live data grows. The soak starts the child with the inspector on a
// loopback port (a benchmark-only flag; Muninn's code is unchanged) and, once a minute, asks V8 for a full
// collection and then for its heap usage: what is left is what the process still references.
import WebSocket from 'ws';

export interface LiveHeapSample {
  /** Seconds since the load started. */
  readonly t: number;
  /** V8 heap in use right after a full collection, MiB. */
  readonly usedMiB: number;
  /** ArrayBuffer backing stores (Buffers, typed arrays) at the same moment, MiB; 0 if V8 does not say. */
  readonly backingMiB: number;
}

export interface Inspector {
  liveHeap(t: number): Promise<LiveHeapSample>;
  close(): void;
}

/** Connects to the first target of a Node inspector listening on `host:port`. */
export async function connectInspector(host: string, port: number, timeoutMs = 30_000): Promise<Inspector> {
  const deadline = Date.now() + timeoutMs;
  let url: string | undefined;
  while (!url) {
    const list = await fetch(`http://${host}:${port}/json/list`)
      .then((r) => r.json() as Promise<Array<{ webSocketDebuggerUrl?: string }>>)
      .catch(() => []);
    url = list[0]?.webSocketDebuggerUrl;
    if (!url && Date.now() > deadline) throw new Error(`no inspector target on ${host}:${port}`);
    if (!url) await new Promise((r) => setTimeout(r, 200));
  }
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let next = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  ws.on('message', (data: Buffer) => {
    const m = JSON.parse(data.toString('utf8')) as {
      id?: number;
      result?: unknown;
      error?: { message: string };
    };
    const p = m.id === undefined ? undefined : pending.get(m.id);
    if (!p) return;
    pending.delete(m.id!);
    if (m.error) p.reject(new Error(m.error.message));
    else p.resolve(m.result);
  });
  const send = <T>(method: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      ws.send(JSON.stringify({ id, method }));
    });
  return {
    async liveHeap(t) {
      await send('HeapProfiler.collectGarbage');
      const u = await send<{ usedSize: number; backingStorageSize?: number }>('Runtime.getHeapUsage');
      return { t, usedMiB: u.usedSize / 2 ** 20, backingMiB: (u.backingStorageSize ?? 0) / 2 ** 20 };
    },
    close: () => ws.close(),
  };
}
