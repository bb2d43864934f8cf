import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';

/**
 * More than one connection accepted per turn of the event loop.
 *
 * Why: since libuv 1.45 (Node 20), a listening socket accepts ONE connection per loop iteration and
 * relies on level-triggered polling for the next (libuv#3696). Under load an iteration of Muninn's loop
 * takes 5–20 ms, so new connections are accepted at ~50–200 a second while the kernel queues the rest.
 * Measured (issue #11, bench:ledger at twice the sustainable rate): the client grew its pool by ~200
 * connections, the listen queue held up to 71 of them (`ss -ltn`), and requests on new connections
 * waited p50 0.3 s, p99 1.1 s before the server saw them, against p99 68 ms on reused ones; the refusals
 * that were meant to come back at once had a p99 of 0.4–2 s because of them.
 *
 * How: every extra libuv handle on the same listening socket accepts one more connection per iteration.
 * A second handle needs a second file descriptor for the socket (epoll takes one registration per
 * descriptor), and Node 20 has no `dup` and no `reusePort` (22.12+). Passing the handle to a child
 * process over IPC and back does it: SCM_RIGHTS installs a new descriptor on each trip. The child is a
 * few lines of `node -e` that only echoes handles and exits once the parent disconnects; a connection
 * accepted on any handle is handed to the HTTP server (`'connection'`, as Node documents for injecting
 * sockets), so everything after the accept is the server's own path. When there is no connection
 * waiting, a turn costs the extra handles one failed accept() each (EAGAIN).
 *
 * If the trip fails (no child process allowed, a timeout), the server keeps its one handle and says so.
 */
const ECHO =
  "process.on('message', (_m, h) => process.send('dup', h)); process.on('disconnect', () => process.exit(0));";
const TIMEOUT_MS = 10_000;

export interface Acceptors {
  /** How many handles accept on the socket, the server's own included. */
  readonly count: number;
  /**
   * Stops the extra handles accepting, at once; resolves when the connections they accepted have ended.
   * Close the HTTP server's connections before awaiting it: they are the same connections.
   */
  close(): Promise<void>;
}

/**
 * Adds `count - 1` handles on `server`'s listening socket (which must be listening), each handing its
 * connections to `server`. `backlog` is passed again because listen() on an already-listening socket
 * sets the queue length anew.
 */
export async function addAcceptors(
  server: Server,
  count: number,
  backlog: number,
  onError: (e: Error) => void,
  /** The program that echoes handles (a test gives one that cannot start). */
  node: string = process.execPath,
): Promise<Acceptors> {
  const handle = (server as unknown as { _handle?: unknown })._handle;
  if (count <= 1 || !handle) return { count: 1, close: () => Promise.resolve() };
  const extras: Server[] = [];
  let handles: unknown[] = [];
  try {
    handles = await duplicates(handle, count - 1, node);
    for (const h of handles) {
      const s = createServer();
      s.on('connection', (socket) => server.emit('connection', socket));
      s.on('error', onError);
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(h, backlog, () => {
          s.off('error', reject);
          resolve();
        });
      });
      extras.push(s);
    }
  } catch (e) {
    onError(e instanceof Error ? e : new Error(String(e)));
    // A descriptor left open would keep the port taking handshakes after the server closes.
    handles.slice(extras.length).forEach(closeHandle);
  }
  return {
    count: 1 + extras.length,
    close: () => {
      // Each extra handle stops accepting at once (close() closes it before its callback); the callback
      // comes once the connections it accepted have ended, which the HTTP server closes (they are its).
      const drained = extras.map((s) => new Promise<void>((resolve) => s.close(() => resolve())));
      return Promise.all(drained).then(() => undefined);
    },
  };
}

/**
 * `n` new descriptors for the socket behind `handle`, each wrapped in a libuv handle (see above). Resolves
 * once the echo has exited: until then it holds copies of the socket, which would keep the port open
 * after the server closes.
 */
async function duplicates(handle: unknown, n: number, node: string): Promise<unknown[]> {
  const child = spawn(node, ['-e', ECHO], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: {},
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const got: unknown[] = [];
  try {
    return await new Promise<unknown[]>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no handles back within ${TIMEOUT_MS} ms`)),
        TIMEOUT_MS,
      );
      child.on('error', reject); // every failed send emits one
      void exited.then(() => reject(new Error('the handle echo exited early')));
      child.on('message', (_m, h) => {
        got.push(h);
        if (got.length === n) {
          clearTimeout(timer);
          resolve(got);
        }
      });
      for (let i = 0; i < n; i++) child.send('dup', handle as never);
    });
  } catch (e) {
    got.forEach(closeHandle);
    throw e;
  } finally {
    if (child.connected) child.disconnect();
    if (child.exitCode === null && child.signalCode === null) {
      const force = setTimeout(() => child.kill('SIGKILL'), 2_000);
      // A child that never started emits 'error' and no 'exit': do not wait for it forever.
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3_000).unref())]);
      clearTimeout(force);
    }
  }
}

function closeHandle(h: unknown): void {
  (h as { close?: () => void }).close?.();
}
