import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { freePort } from '../support/processes.ts';
import { afterAll, describe, expect, it } from 'vitest';
import { startMuninn, type Muninn } from '../../src/main.ts';
import { silentLogger } from '../../src/ports/logger.ts';
import { testConfig } from '../support/harness.ts';

/**
 * The projector role's probes on the real stack: it serves no API, so its metrics port answers /healthz
 * (alive) and /readyz (projector running and a member of its consumer group; 503 otherwise).
 */
const root = new URL('../../', import.meta.url).pathname;
const suffix = randomUUID().slice(0, 8);
const env = {
  MUNINN_PROJECTOR_GROUP: `health-${suffix}`,
  MUNINN_PROJECTOR_SESSION_TIMEOUT_MS: '6000',
  MUNINN_EMBEDDER: 'hashing',
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Probe {
  readonly status: number;
  readonly body: { ready?: boolean; status?: string; checks?: Record<string, string> };
}

const probe = (url: string): Promise<Probe | null> =>
  fetch(url).then(
    async (r) => ({ status: r.status, body: (await r.json()) as Probe['body'] }),
    () => null,
  );

async function until(url: string, ok: (p: Probe) => boolean, timeoutMs = 120_000): Promise<Probe | null> {
  let last: Probe | null = null;
  for (const end = Date.now() + timeoutMs; Date.now() < end; await sleep(250)) {
    last = await probe(url);
    if (last && ok(last)) return last;
  }
  return last;
}

let child: ChildProcess | undefined;
let inProcess: Muninn | undefined;
afterAll(async () => {
  child?.kill('SIGKILL');
  await inProcess?.stop();
});

describe('projector role health', () => {
  it('`muninn serve --role projector` answers /healthz and, once in its group, /readyz on the metrics port', async () => {
    const config = testConfig(env);
    const port = await freePort();
    child = spawn(process.execPath, ['bin/muninn', 'serve', '--role', 'projector'], {
      cwd: root,
      env: {
        ...process.env,
        NEO4J_URI: config.neo4j.uri,
        KAFKA_BROKERS: config.kafka.brokers.join(','),
        MUNINN_STATE_DIR: config.stateDir,
        MUNINN_KEY_DIR: config.erasure.keyDir,
        MUNINN_METRICS_PORT: String(port),
        MUNINN_LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: 'ignore',
    });
    const base = `http://127.0.0.1:${port}`;
    const ready = await until(`${base}/readyz`, (p) => p.status === 200);
    expect(ready?.status).toBe(200);
    expect(ready?.body).toEqual({
      ready: true,
      checks: { projector: 'running', consumerGroup: 'joined' },
    });
    expect(await probe(`${base}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } });
    // Still the metrics listener: a scrape answers beside the probes.
    expect((await fetch(`${base}/metrics`)).status).toBe(200);
  });

  it('/readyz answers 503 once the projector has stopped, while /healthz still answers 200', async () => {
    inProcess = await startMuninn(
      testConfig({ ...env, MUNINN_ROLE: 'projector', MUNINN_METRICS_PORT: '0' }),
      silentLogger,
    );
    const base = inProcess.metrics!.url.replace(/\/metrics$/, '');
    expect((await until(`${base}/readyz`, (p) => p.status === 200))?.status).toBe(200);
    await inProcess.projector!.stop();
    const after = await probe(`${base}/readyz`);
    expect(after).toEqual({
      status: 503,
      body: { ready: false, checks: { projector: 'stopped', consumerGroup: 'not joined' } },
    });
    expect((await probe(`${base}/healthz`))?.status).toBe(200);
  });
});
