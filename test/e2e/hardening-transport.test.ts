import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { createLogger } from '../../src/adapters/logger.ts';
import { TOKEN_EXPIRED_CLOSE } from '../../src/api/ws.ts';
import { freshTenant, PROPOSE, proposal, startApp, type TestApp } from '../support/harness.ts';

/**
 * Issue #9, transport and tokens, against the real stack: WebSocket token expiry, WebSocket error codes,
 * the per-socket operation cap and the projectionLag floor, nested page sizes in the cost limit, the
 * maximum token lifetime, failed-authentication logging, and case-folded tenants and namespaces.
 */

const suffix = randomUUID().slice(0, 8);
const MAX_TTL = 3600;
const MAX_OPS = 3;
const logs: string[] = [];
let app: TestApp;
let wsUrl: string;

beforeAll(async () => {
  const stream = new PassThrough();
  stream.on('data', (b: Buffer) => logs.push(...b.toString().split('\n').filter(Boolean)));
  app = await startApp(
    {
      // Its own topic and group: this app's projector never rebalances another file's.
      MUNINN_LEDGER_TOPIC: `muninn.test.transport.${suffix}`,
      MUNINN_DLQ_TOPIC: `muninn.test.transport.${suffix}.dlq`,
      MUNINN_PROJECTOR_GROUP: `transport-${suffix}`,
      // No skew: a short-lived token is refused (and its socket closed) exactly at its exp.
      MUNINN_AUTH_CLOCK_SKEW_S: '0',
      MUNINN_MAX_TOKEN_TTL_S: String(MAX_TTL),
      MUNINN_WS_MAX_SUBSCRIPTIONS: String(MAX_OPS),
    },
    createLogger('info', 'muninn', stream),
  );
  wsUrl = app.url.replace(/^http/, 'ws');
});
afterAll(async () => {
  await Promise.all(clients.map(async (c) => c.dispose()));
  await app?.stop();
});

// ---------------------------------------------------------------------------------------------------------
// helpers

type WireError = { message: string; extensions?: Record<string, unknown> };
interface Outcome {
  readonly data: Array<{ data?: unknown; errors?: WireError[] }>;
  readonly error: unknown;
  readonly timedOut: boolean;
}

const clients: Client[] = [];
function client(token: string): Client {
  const c = createClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
    connectionParams: { authorization: `Bearer ${token}` },
  });
  clients.push(c);
  return c;
}

/**
 * Runs one operation; resolves once `n` results came (then unsubscribes), or on error / completion /
 * timeout. A query ends on its completion (n = ∞): unsubscribing an operation the server is completing
 * makes the graphql-ws client release its socket twice and close it under the other operations.
 */
function run(
  c: Client,
  query: string,
  variables?: Record<string, unknown>,
  n = Infinity,
  timeoutMs = 10_000,
) {
  return new Promise<Outcome>((resolve) => {
    const data: Outcome['data'] = [];
    let unsubscribe: () => void = () => undefined;
    const finish = (error: unknown, o: { timedOut?: boolean; ended?: boolean } = {}) => {
      clearTimeout(timer);
      if (!o.ended) unsubscribe();
      resolve({ data, error, timedOut: !!o.timedOut });
    };
    const timer = setTimeout(() => finish(undefined, { timedOut: true }), timeoutMs);
    unsubscribe = c.subscribe(
      { query, ...(variables ? { variables } : {}) },
      {
        next: (v) => {
          data.push(v as Outcome['data'][number]);
          if (data.length >= n) finish(undefined);
        },
        error: (e) => finish(e, { ended: true }),
        complete: () => finish(undefined, { ended: true }),
      },
    );
  });
}
const closeCode = (o: Outcome): unknown => (o.error as { code?: unknown } | undefined)?.code;
const errorsOf = (o: Outcome): WireError[] =>
  Array.isArray(o.error) ? (o.error as WireError[]) : o.data.flatMap((d) => d.errors ?? []);

const LAG = (ms = 1000) => `subscription { projectionLag(intervalMs: ${ms}) { totalLag healthy } }`;
const RECORD = `query R($id: ID!) { record(id: $id) { id statement { text } } }`;

async function http(token: string | undefined, body: string) {
  const res = await fetch(app.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body,
  });
  return { status: res.status, body: (await res.json()) as { data?: unknown; errors?: WireError[] } };
}

/** This app's ledger alone (its own topic): the sum of the partitions' high watermarks. */
const ledgerTotal = async () =>
  (await app.m.ledger.offsets()).reduce((s, o) => s + BigInt(o.highWatermark), 0n);

/** One operation over a raw graphql-transport-ws socket, for payloads the client library cannot encode. */
function rawWs(token: string, payloadJson: string) {
  return new Promise<{ messages: Array<{ type: string; payload?: unknown }>; close?: number }>((resolve) => {
    const messages: Array<{ type: string; payload?: unknown }> = [];
    const sock = new WebSocket(wsUrl, 'graphql-transport-ws');
    const done = (close?: number) => {
      clearTimeout(timer);
      sock.terminate();
      resolve({ messages, ...(close === undefined ? {} : { close }) });
    };
    const timer = setTimeout(() => done(), 15_000);
    sock.on('open', () =>
      sock.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } })),
    );
    sock.on('message', (raw: Buffer) => {
      const m = JSON.parse(raw.toString()) as { type: string; payload?: unknown };
      if (m.type === 'connection_ack') sock.send(`{"type":"subscribe","id":"1","payload":${payloadJson}}`);
      else messages.push(m);
      if (m.type === 'complete' || m.type === 'error') done();
    });
    sock.on('close', (code: number) => done(code));
  });
}

/** Every error a response carries is typed the way HTTP types it, and shows no internals. */
function expectClean(errors: readonly WireError[], code: string): void {
  expect(errors.length).toBeGreaterThan(0);
  for (const e of errors) {
    expect(e.extensions?.['code']).toBe(code);
    expect(typeof e.extensions?.['retryable']).toBe('boolean');
    expect(JSON.stringify(e)).not.toMatch(/Maximum call stack|neo4j|cypher|kafka|stacktrace|\n\s+at\s/i);
  }
}

const deepJson = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
/** A proposal whose ext nests `levels` deep, as JSON text (JSON.stringify itself overflows on it). */
const deepProposal = (levels: number) =>
  `${JSON.stringify(proposal({ namespace: 'sec/deep' })).slice(0, -1)},"ext":{"x:deep":${deepJson(levels)}}}`;

// ---------------------------------------------------------------------------------------------------------

describe('a WebSocket does not outlive its token', () => {
  // Long enough to connect and query on a loaded 2-core machine, short enough to keep the test quick.
  const SHORT_TTL = 8;

  it(`a ${SHORT_TTL}-second token: queries run until exp, then the socket closes (${TOKEN_EXPIRED_CLOSE}) and reconnecting is refused`, async () => {
    const tenant = freshTenant('ws-exp');
    const writer = await app.token({ tenant });
    const p = await app.gql<{ propose: { recordId: string } }>(writer, PROPOSE, {
      input: proposal({ namespace: 'sec/ws' }),
    });
    const id = p.data!.propose.recordId;

    const short = await app.token({ tenant, ttlSeconds: SHORT_TTL });
    const exp = (JSON.parse(Buffer.from(short.split('.')[1]!, 'base64url').toString()) as { exp: number })
      .exp;
    const c = client(short);
    const lag = run(c, LAG(), undefined, 1000, 20_000); // keeps the socket open until it is closed
    const before = await run(c, RECORD, { id });
    expect(before.error).toBeUndefined();
    expect(errorsOf(before)).toEqual([]);
    expect(JSON.stringify(before.data)).toContain('uses Postgres'); // control: record text while valid

    const ended = await lag;
    expect(ended.timedOut).toBe(false);
    expect(closeCode(ended)).toBe(TOKEN_EXPIRED_CLOSE);
    expect(Date.now()).toBeGreaterThanOrEqual(exp * 1000); // not closed early
    expect(ended.data.length).toBeGreaterThan(0); // it did run before

    const after = await run(c, RECORD, { id }, Infinity, 5000);
    expect(after.data).toEqual([]);
    expect(closeCode(after)).toBe(4403);
    expect(logs.some((l) => l.includes('"ws_token_expired"'))).toBe(true);
  });
});

describe('WebSocket errors carry stable codes and no internals', () => {
  it('a 50,000-level ext over WS → BAD_USER_INPUT (not a stack overflow), nothing appended', async () => {
    const token = await app.token({ tenant: freshTenant('ws-err') });
    const before = await ledgerTotal();
    const r = await rawWs(
      token,
      `{"query":${JSON.stringify(PROPOSE)},"variables":{"input":${deepProposal(50_000)}}}`,
    );
    const errors = r.messages.flatMap((m) =>
      m.type === 'error'
        ? (m.payload as WireError[])
        : ((m.payload as { errors?: WireError[] })?.errors ?? []),
    );
    expectClean(errors, 'BAD_USER_INPUT');
    expect(errors[0]!.message).toContain('nested deeper than 32 levels');
    expect(await ledgerTotal()).toBe(before);
  });

  it('the same ext over HTTP → 400 BAD_USER_INPUT, nothing appended', async () => {
    const token = await app.token({ tenant: freshTenant('ws-err') });
    const before = await ledgerTotal();
    const r = await http(
      token,
      `{"query":${JSON.stringify(PROPOSE)},"variables":{"input":${deepProposal(50_000)}}}`,
    );
    expect(r.status).toBe(400);
    expectClean(r.body.errors ?? [], 'BAD_USER_INPUT');
    expect(await ledgerTotal()).toBe(before);
  });

  it('a 40-level ext literal over WS → BAD_USER_INPUT', async () => {
    const token = await app.token({ tenant: freshTenant('ws-err') });
    const literal = `${'{a:'.repeat(40)}1${'}'.repeat(40)}`;
    const q = `mutation { propose(input: { namespace: "sec/deep", class: FACT, purpose: "t", idempotencyKey: "${randomUUID()}",
      statement: { subject: "s", predicate: "p", object: "o", text: "t" }, ext: { x_deep: ${literal} } }) { outcome } }`;
    const errors = errorsOf(await run(client(token), q));
    expectClean(errors, 'BAD_USER_INPUT');
    expect(errors[0]!.message).toContain('nested deeper than 32 levels');
  });

  it.each([
    ['a validation error (unknown field)', `{ nosuchfield }`, undefined, 'BAD_USER_INPUT'],
    ['a missing required variable', RECORD, {}, 'BAD_USER_INPUT'],
    [
      'an over-deep query (limit depth)',
      `{ __schema { types { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } }`,
      undefined,
      'BAD_USER_INPUT',
    ],
    [
      'an invalid namespace filter (a MuninnError)',
      `{ records(filter: { namespace: "no spaces allowed" }) { nodes { id } } }`,
      undefined,
      'BAD_USER_INPUT',
    ],
  ] as const)('%s over WS → %s with retryable', async (_name, query, variables, code) => {
    const token = await app.token({ tenant: freshTenant('ws-err') });
    const r = await run(client(token), query, variables as Record<string, unknown> | undefined);
    expectClean(errorsOf(r), code);
  });

  it('a missing scope over WS → FORBIDDEN, retryable false', async () => {
    const token = await app.token({ tenant: freshTenant('ws-err'), scopes: ['read'] });
    const r = await run(client(token), PROPOSE, { input: proposal({ namespace: 'sec/ws' }) });
    expectClean(errorsOf(r), 'FORBIDDEN');
    expect(errorsOf(r)[0]!.extensions!['retryable']).toBe(false);
  });
});

describe('subscriptions are capped per socket; projectionLag polls at most once a second', () => {
  it(`${MAX_OPS} subscriptions run, one more is RATE_LIMITED, and a slot freed is usable again`, async () => {
    const c = client(await app.token({ tenant: freshTenant('ws-cap') }));
    const open = Array.from({ length: MAX_OPS }, () => {
      let first: () => void = () => undefined;
      const arrived = new Promise<void>((r) => (first = r));
      const stop = c.subscribe(
        { query: LAG() },
        { next: () => first(), error: () => undefined, complete: () => undefined },
      );
      return { arrived, stop };
    });
    await Promise.all(open.map((o) => o.arrived));

    const refused = await run(c, LAG(), undefined, 1, 5000);
    expect(refused.data).toEqual([]);
    expectClean(errorsOf(refused), 'RATE_LIMITED');
    expect(errorsOf(refused)[0]!.extensions).toMatchObject({
      limit: 'subscriptions',
      max: MAX_OPS,
      retryable: true,
    });

    open[0]!.stop();
    const again = await run(c, LAG(), undefined, 1);
    expect(errorsOf(again)).toEqual([]);
    expect(again.data).toHaveLength(1);
    for (const o of open) o.stop();
  });

  it('intervalMs: 10 is raised to the 1000 ms floor (≤ 4 events in 2.5 s, not ~250)', async () => {
    const c = client(await app.token({ tenant: freshTenant('ws-cap') }));
    const r = await run(c, LAG(10), undefined, 1000, 2500);
    expect(r.timedOut).toBe(true);
    expect(r.data.length).toBeGreaterThanOrEqual(1);
    expect(r.data.length).toBeLessThanOrEqual(4);
  });
});

describe('nested page sizes count in the cost limit', () => {
  const ITEMS = `items { handle score headline body record { id namespace statement { text } } why { arms { arm rank } score } }`;
  const recalls = (n: number) =>
    `{ ${Array.from({ length: n }, (_, i) => `r${i}: recall(input: { query: "postgres", namespace: "sec", purpose: "t", limit: 100 }) { ${ITEMS} }`).join(' ')} }`;

  it('30 aliased recall(input: { limit: 100 }) → 400 BAD_USER_INPUT limit cost, not executed (HTTP and WS)', async () => {
    const token = await app.token({ tenant: freshTenant('cost') });
    const r = await http(token, JSON.stringify({ query: recalls(30) }));
    expect(r.status).toBe(400);
    expect(r.body.data).toBeUndefined();
    expectClean(r.body.errors ?? [], 'BAD_USER_INPUT');
    expect(r.body.errors![0]!.extensions).toMatchObject({
      limit: 'cost',
      max: app.config.http.limits.maxCost,
    });

    const w = await run(client(token), recalls(30));
    expect(w.data).toEqual([]);
    expect(errorsOf(w)[0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', limit: 'cost' });
  });

  it('control: one such recall runs', async () => {
    const token = await app.token({ tenant: freshTenant('cost') });
    const r = await http(token, JSON.stringify({ query: recalls(1) }));
    expect(r.body.errors).toBeUndefined();
    expect(r.status).toBe(200);
  });
});

describe(`tokens live at most MUNINN_MAX_TOKEN_TTL_S (${MAX_TTL} s here)`, () => {
  it('a token one second longer → 401 UNAUTHENTICATED over HTTP and 4403 over WS; exactly the maximum passes', async () => {
    const tenant = freshTenant('ttl');
    const long = await app.token({ tenant, ttlSeconds: MAX_TTL + 1 });
    const ok = await app.token({ tenant, ttlSeconds: MAX_TTL });
    const body = JSON.stringify({ query: PROPOSE, variables: { input: proposal({ namespace: 'sec/ttl' }) } });
    const before = await ledgerTotal();
    const r = await http(long, body);
    expect(r.status).toBe(401);
    expectClean(r.body.errors ?? [], 'UNAUTHENTICATED');
    expect(await ledgerTotal()).toBe(before);
    expect(closeCode(await run(client(long), LAG(), undefined, 1, 5000))).toBe(4403);
    expect((await http(ok, body)).status).toBe(200); // control
  });

  it('muninn token --ttl beyond the maximum exits 2 without a token; within it prints one', async () => {
    const cli = (ttl: string) =>
      promisify(execFile)(
        process.execPath,
        ['bin/muninn', 'token', '--tenant', 't', '--sub', 's', '--ttl', ttl],
        {
          env: { ...process.env, MUNINN_STATE_DIR: app.config.stateDir, MUNINN_MAX_TOKEN_TTL_S: '' },
        },
      ).then(
        (r) => ({ code: 0, ...r }),
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
    const refused = await cli('2d');
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('MUNINN_MAX_TOKEN_TTL_S');
    const printed = await cli('1h');
    expect(printed.code).toBe(0);
    expect(printed.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
  });
});

describe('failed authentications are logged, never with the token', () => {
  const waitForLog = async (needle: string) => {
    for (let i = 0; i < 50 && !logs.some((l) => l.includes(needle)); i++)
      await new Promise((r) => setTimeout(r, 50));
    return logs.filter((l) => l.includes(needle)).map((l) => JSON.parse(l) as Record<string, unknown>);
  };

  it('HTTP: an over-long token by sub X → one auth_failed line with reason, sub and remote; no token', async () => {
    const sub = `mallory-${randomUUID().slice(0, 8)}`;
    const token = await app.token({ tenant: freshTenant('log'), sub, ttlSeconds: MAX_TTL + 60 });
    expect((await http(token, JSON.stringify({ query: '{ __typename }' }))).status).toBe(401);
    const lines = await waitForLog(sub);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      event: 'auth_failed',
      transport: 'http',
      code: 'UNAUTHENTICATED',
      reason: `token lifetime exceeds ${MAX_TTL} s`,
      claimed: { iss: app.config.auth.issuer, sub },
    });
    expect(String(lines[0]!['remote'])).toMatch(/127\.0\.0\.1|::1/);
    const all = logs.join('\n');
    for (const part of [token, ...token.split('.')]) expect(all).not.toContain(part);
  });

  it('WS: a garbage token → an auth_failed line for transport ws, without the token', async () => {
    const garbage = `garbage-${randomUUID()}`;
    expect(closeCode(await run(client(garbage), LAG(), undefined, 1, 5000))).toBe(4403);
    const lines = (await waitForLog('"transport":"ws"')).filter((l) => l['reason'] === 'malformed token');
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(logs.join('\n')).not.toContain(garbage);
  });
});

describe('tenants and namespaces are case-insensitive', () => {
  const LIST = `query L($ns: String!) { records(filter: { namespace: $ns }) { nodes { id namespace } } }`;
  type List = { records: { nodes: Array<{ id: string; namespace: string }> } };

  it('ACME/ENG and acme/eng are one namespace, and a token for tenant ACME is tenant acme', async () => {
    const tenant = freshTenant('fold');
    const upper = await app.token({ tenant: tenant.toUpperCase() });
    const lower = await app.token({ tenant });
    const ids: string[] = [];
    for (const [token, namespace] of [
      [upper, 'ACME/ENG'],
      [lower, 'acme/eng'],
      [lower, 'Acme/Eng'],
    ] as const) {
      const r = await app.gql<{ propose: { recordId: string } }>(token, PROPOSE, {
        input: proposal({ namespace }),
      });
      expect(r.errors).toBeUndefined();
      ids.push(r.data!.propose.recordId);
    }
    for (const [token, ns] of [
      [lower, 'acme/eng'],
      [upper, 'ACME/ENG'],
      [upper, 'acme/ENG'],
    ] as const) {
      const r = await app.gql<List>(token, LIST, { ns });
      expect(r.errors).toBeUndefined();
      expect(r.data!.records.nodes.map((n) => n.id).sort()).toEqual([...ids].sort());
      expect(new Set(r.data!.records.nodes.map((n) => n.namespace))).toEqual(new Set(['acme/eng']));
    }
    // control: another tenant sees none of it
    const other = await app.gql<List>(await app.token({ tenant: freshTenant('fold') }), LIST, {
      ns: 'acme/eng',
    });
    expect(other.data!.records.nodes).toEqual([]);
  });
});
