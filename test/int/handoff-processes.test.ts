import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { freePort } from '../support/processes.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshTenant, startApp, type TestApp } from '../support/harness.ts';
import { publishWindows, TRANSCRIPT_TEXTS } from '../support/outbox-fixture.ts';

/**
 * Issue #15's handoff topology as real processes: `muninn handoff serve` on its own private port (no Kafka
 * in its environment: it needs only Neo4j and the outbox) and `muninn curate` as a client of it and of the
 * main API (no Neo4j or Kafka in its environment), driving a manifest into CANDIDATE drafts and committing
 * the checkpoint. The handoff token comes from a credential-helper command, one fresh token per call.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const SERVER_ENV = ['NEO4J_URI', 'KAFKA_BROKERS'];

/** process.env without the stack's endpoints: each process gets only what it is meant to need. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !SERVER_ENV.includes(k) && !k.startsWith('MUNINN_')) env[k] = v;
  return env;
}

function run(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
    const p = spawn(process.execPath, ['bin/muninn', ...args], { cwd: ROOT, env: { ...baseEnv(), ...env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

let app: TestApp;
let handoff: ChildProcess;
let handoffOut = '';
let base: string;
let metricsUrl: string;
let curateEnv: Record<string, string>;
let tenant: string;
let curatorToken: string;

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'muninn-handoff-procs-'));
  const outbox = join(dir, 'outbox');
  await publishWindows(outbox, dir, 1, 'p');
  tenant = freshTenant('curated');
  app = await startApp();
  const [port, metricsPort] = [await freePort(), await freePort()];
  base = `http://127.0.0.1:${port}`;
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const stream = `procs-${randomUUID().slice(0, 8)}`;
  handoff = spawn(process.execPath, ['bin/muninn', 'handoff', 'serve'], {
    cwd: ROOT,
    env: {
      ...baseEnv(),
      NEO4J_URI: app.config.neo4j.uri,
      MUNINN_ENV: 'test',
      MUNINN_STATE_DIR: app.config.stateDir,
      MUNINN_OUTBOX_DIR: outbox,
      MUNINN_HANDOFF_STREAM: stream,
      MUNINN_HANDOFF_PORT: String(port),
      MUNINN_METRICS_PORT: String(metricsPort),
      MUNINN_LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  handoff.stdout!.on('data', (d: Buffer) => (handoffOut += d.toString()));
  handoff.stderr!.on('data', (d: Buffer) => (handoffOut += d.toString()));
  const deadline = Date.now() + 90_000;
  for (;;) {
    const ready = await fetch(`${base}/readyz`).catch(() => null);
    if (ready?.status === 200) break;
    if (handoff.exitCode !== null || Date.now() > deadline)
      throw new Error(`handoff serve did not become ready:\n${handoffOut}`);
    await new Promise((r) => setTimeout(r, 300));
  }
  curatorToken = await app.token({ tenant, sub: 'curator', scopes: ['read', 'write'] });
  const helper = ['node', '--import', 'tsx', 'test/support/dev-token.ts', app.config.stateDir];
  curateEnv = {
    MUNINN_ENV: 'test',
    MUNINN_LOG_LEVEL: 'info',
    MUNINN_HANDOFF_URL: `${base}/handoff`,
    MUNINN_HANDOFF_TOKEN_COMMAND: [
      ...helper,
      app.config.auth.handoffAudience,
      'heimdall',
      'heimdall',
      'handoff',
    ].join(' '),
    MUNINN_GRAPHQL_URL: app.url,
    MUNINN_CURATOR_TOKEN: curatorToken,
  };
}, 180_000);

afterAll(async () => {
  if (handoff && handoff.exitCode === null) {
    handoff.kill('SIGKILL');
    await new Promise((r) => handoff.once('exit', r));
  }
  await app?.stop();
});

const handoffCheckpoint = async () => {
  const token = await app.token({
    tenant: 'heimdall',
    sub: 'heimdall',
    scopes: ['handoff'],
    ttlSeconds: 60,
    audience: app.config.auth.handoffAudience,
  });
  const r = await fetch(`${base}/handoff`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: '{ checkpoint { seq } }' }),
  });
  return ((await r.json()) as { data: { checkpoint: { seq: number } } }).data.checkpoint.seq;
};

describe('muninn handoff serve + muninn curate as processes', () => {
  it('curate with a handoff token the contract refuses fails with a typed error and commits nothing', async () => {
    const r = await run(['curate'], { ...curateEnv, MUNINN_HANDOFF_TOKEN_COMMAND: 'echo not.a.jwt' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^UNAUTHENTICATED: /m);
    expect(await handoffCheckpoint()).toBe(0);
    const broken = await run(['curate'], { ...curateEnv, MUNINN_HANDOFF_TOKEN_COMMAND: 'exit 3' });
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('UNAVAILABLE: the token command exited 3');
  }, 120_000);

  it('curate drives the manifest through /handoff into CANDIDATE drafts on the main API and commits the checkpoint', async () => {
    const r = await run(['curate'], curateEnv);
    expect(r.code, r.stderr).toBe(0);
    const outcomes = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    expect(outcomes).toEqual([
      expect.objectContaining({ kind: 'committed', seq: 1, windows: 1, repeated: false }),
      { kind: 'idle', checkpoint: 1 },
    ]);
    expect((outcomes[0] as { drafts: number }).drafts).toBeGreaterThan(0);
    expect(await handoffCheckpoint()).toBe(1);
    const records = await app.gql<{ records: { nodes: Array<{ status: string; changesetId: string }> } }>(
      await app.token({ tenant, sub: 'reviewer', scopes: ['read'] }),
      `{ records(filter: {namespace: "handoff", statuses: [CANDIDATE, ACTIVE]}, first: 100) { nodes { status changesetId } } }`,
    );
    expect(records.errors).toBeUndefined();
    expect(records.data!.records.nodes.length).toBe((outcomes[0] as { drafts: number }).drafts);
    for (const n of records.data!.records.nodes)
      expect(n).toEqual({ status: 'CANDIDATE', changesetId: 'handoff:seq:1' });
    // Neither process prints transcript text or a credential.
    for (const out of [r.stdout + r.stderr, handoffOut]) {
      for (const t of TRANSCRIPT_TEXTS) expect(out).not.toContain(t);
      expect(out).not.toContain(curatorToken);
      expect(out).not.toMatch(/eyJ[\w-]+\.eyJ/);
    }
    // The handoff process counted the contract's operations on its own /metrics.
    const metrics = await (await fetch(metricsUrl)).text();
    expect(metrics).toMatch(
      /muninn_graphql_requests_total\{operation="mutation.commitCheckpoint",code="OK"\} 1/,
    );
  }, 180_000);

  it('SIGTERM stops the handoff process cleanly', async () => {
    const exited = new Promise<number | null>((r) => handoff.once('exit', (code) => r(code)));
    handoff.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 60_000);
});
