import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/**
 * Running Muninn as its own process (`bin/muninn serve`), for the tests and benchmarks that need a real
 * process: several of them at once, a SIGKILL, or an honest RSS. No vitest here, so benchmarks use it too.
 */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export interface ServeProcess {
  readonly child: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal) once the process has exited. */
  readonly exited: Promise<number | null>;
}

/**
 * `muninn serve --role <role>` from the repository root, with the caller's environment plus `env`. Its
 * stderr (the JSON log) is piped for the caller to read, or ignored.
 */
export function spawnServe(
  role: 'all' | 'api' | 'projector',
  env: Readonly<Record<string, string>>,
  stderr: 'pipe' | 'ignore' = 'pipe',
): ServeProcess {
  const child = spawn(process.execPath, ['bin/muninn', 'serve', '--role', role], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', stderr],
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, exited };
}

/** Waits until `<url>/readyz` answers 200 (migrations done, Neo4j and Kafka reachable). */
export async function waitReady(url: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${url} not ready within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
