// Extra connection acceptors (src/api/acceptors.ts): a busy event loop takes more than one queued
// connection per turn. Real sockets on 127.0.0.1; no database.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { makeExecutableSchema } from '@graphql-tools/schema';
import { buildSchema, type GraphQLSchema } from 'graphql';
import { addAcceptors, type Acceptors } from '../../src/api/acceptors.ts';
import { startGraphqlServer } from '../../src/api/server.ts';
import { silentLogger } from '../../src/ports/logger.ts';
import type { TokenVerifier } from '../../src/ports/token-verifier.ts';

const BACKLOG = 4096;
let server: Server | undefined;
let acceptors: Acceptors | undefined;
const clients: Socket[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  await acceptors?.close();
  acceptors = undefined;
  if (server) {
    server.closeAllConnections();
    await new Promise<void>((r) => server!.close(() => r()));
  }
  server = undefined;
});

async function listening(): Promise<{ server: Server; port: number }> {
  const s = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => s.listen({ port: 0, host: '127.0.0.1', backlog: BACKLOG }, () => r()));
  server = s;
  const address = s.address();
  if (!address || typeof address !== 'object') throw new Error('no address');
  return { server: s, port: address.port };
}

/**
 * Queues `n` connections in the kernel while this process's loop is blocked (as a busy server's is),
 * then counts the loop turns until the server has taken them all.
 */
async function turnsToAccept(s: Server, port: number, n: number): Promise<number> {
  let accepted = 0;
  s.on('connection', () => accepted++);
  for (let i = 0; i < n; i++) clients.push(connect(port, '127.0.0.1').on('error', () => undefined));
  const turns = await busyTurnThenCount(() => accepted >= n, 10 * n);
  expect(accepted).toBe(n);
  return turns;
}

/**
 * Lets the connects just issued go out (they leave on the next tick; the kernel completes loopback
 * handshakes on its own), blocks the loop for 300 ms, then counts turns until `done()` (at most `max`).
 */
async function busyTurnThenCount(done: () => boolean, max: number): Promise<number> {
  await new Promise((r) => process.nextTick(r));
  const until = Date.now() + 300;
  while (Date.now() < until) {
    /* a loop turn that takes 300 ms */
  }
  let turns = 0;
  while (!done() && turns < max) {
    await new Promise((r) => setImmediate(r));
    turns++;
  }
  return turns;
}

/** 'connected', or the error code of a connect to the port. */
function connectOutcome(port: number): Promise<string> {
  return new Promise<string>((resolve) => {
    const c = connect(port, '127.0.0.1');
    c.once('connect', () => {
      c.destroy();
      resolve('connected');
    });
    c.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
  });
}

/** Closes the acceptors and the server, then tries the port. */
async function closeAllThenConnect(s: Server, port: number): Promise<string> {
  await acceptors?.close();
  acceptors = undefined;
  await new Promise<void>((r) => s.close(() => r()));
  server = undefined;
  return connectOutcome(port);
}

describe('extra connection acceptors', () => {
  it('take up to one queued connection each per loop turn, where Node alone takes one', async () => {
    const { server: s, port } = await listening();
    acceptors = await addAcceptors(s, 8, BACKLOG, (e) => {
      throw e;
    });
    expect(acceptors.count).toBe(8);
    const turns = await turnsToAccept(s, port, 64);
    expect(turns).toBeLessThanOrEqual(16);
  });

  it('without them, a queue of 64 connections takes about 64 turns (the libuv behaviour they answer)', async () => {
    const { server: s, port } = await listening();
    const turns = await turnsToAccept(s, port, 64);
    expect(turns).toBeGreaterThanOrEqual(48);
  });

  it('hand every connection to the HTTP server, which answers on it', async () => {
    const { server: s, port } = await listening();
    acceptors = await addAcceptors(s, 4, BACKLOG, (e) => {
      throw e;
    });
    let requests = 0;
    s.on('request', () => requests++);
    // Queued during a busy turn, so that the extra handles take most of them (4 a turn, not 1).
    const answers: string[] = [];
    for (let i = 0; i < 40; i++) {
      const c = connect(port, '127.0.0.1').on('error', () => undefined);
      clients.push(c);
      c.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      c.setEncoding('utf8').on('data', (d: string) => answers.push(d));
    }
    const turns = await busyTurnThenCount(() => answers.length >= 40, 400);
    expect(turns).toBeLessThanOrEqual(20);
    expect(answers).toHaveLength(40);
    expect(answers.every((a) => a.startsWith('HTTP/1.1 200') && a.endsWith('ok'))).toBe(true);
    expect(requests).toBe(40);
  });

  it('once closed with the server, leave nothing listening on the port', async () => {
    const { server: s, port } = await listening();
    acceptors = await addAcceptors(s, 4, BACKLOG, (e) => {
      throw e;
    });
    expect(await closeAllThenConnect(s, port)).toBe('ECONNREFUSED');
  });

  it('leave the server its one handle, and say why, when the echo cannot start', async () => {
    const { server: s, port } = await listening();
    const errors: string[] = [];
    acceptors = await addAcceptors(s, 8, BACKLOG, (e) => errors.push(e.message), '/nonexistent/node');
    expect(acceptors.count).toBe(1);
    expect(errors.join(' ')).toMatch(/ENOENT/);
    const answer = await fetch(`http://127.0.0.1:${port}/`).then((r) => r.text());
    expect(answer).toBe('ok');
  });

  it('close the handles a failed trip brought back (an echo that answers some and exits)', async () => {
    const { server: s, port } = await listening();
    const errors: string[] = [];
    // A program that echoes one handle and exits, as node -e: the trip for 7 fails after the first.
    const dir = mkdtempSync(join(tmpdir(), 'muninn-echo-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const script = join(dir, 'echo-one.sh');
    writeFileSync(
      script,
      `#!/bin/sh\nexec "${process.execPath}" -e "process.once('message', (_m, h) => process.send('dup', h, () => process.exit(0)))"\n`,
      { mode: 0o755 },
    );
    acceptors = await addAcceptors(s, 8, BACKLOG, (e) => errors.push(e.message), script);
    expect(acceptors.count).toBe(1);
    expect(errors.join(' ')).toMatch(/exited early/);
    expect(await closeAllThenConnect(s, port)).toBe('ECONNREFUSED');
  });

  it('add nothing to a server that is not listening', async () => {
    const s = createServer();
    const a = await addAcceptors(s, 8, BACKLOG, (e) => {
      throw e;
    });
    expect(a.count).toBe(1);
  });
});

const LIMITS = {
  maxDepth: 10,
  maxAliases: 30,
  maxTokens: 5000,
  maxCost: 50_000,
  maxBodyBytes: 1024 * 1024,
  maxWsSubscriptions: 10,
};
const NO_TOKENS: TokenVerifier = { verify: () => Promise.reject(new Error('no tokens here')) };

/** The real API server (startGraphqlServer) with one endpoint and `acceptors` handles. */
function startServer(
  acceptors: number,
  schema: GraphQLSchema = buildSchema('type Query { a: Int }'),
  verifier: TokenVerifier = NO_TOKENS,
) {
  return startGraphqlServer({
    component: 'test',
    host: '127.0.0.1',
    port: 0,
    acceptors,
    limits: LIMITS,
    logger: silentLogger,
    endpoints: { '/graphql': { schema, verifier, introspection: false } },
    readiness: () => Promise.resolve({ ready: true, checks: {} }),
  });
}

describe('the API server', () => {
  /** Turns of this process's loop until `n` new connections, queued while it was blocked, are answered. */
  async function turnsToAnswer(acceptors: number, n: number): Promise<number> {
    const api = await startServer(acceptors);
    try {
      let answered = 0;
      for (let i = 0; i < n; i++) {
        const c = connect(api.port, '127.0.0.1');
        clients.push(c);
        c.on('error', () => undefined);
        c.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
        c.once('data', () => answered++);
      }
      const turns = await busyTurnThenCount(() => answered >= n, 10 * n);
      expect(answered).toBe(n);
      return turns;
    } finally {
      for (const c of clients.splice(0)) c.destroy();
      await api.stop();
    }
  }

  it('answers connections that queued during a busy turn several per turn, where one handle takes one', async () => {
    const withEight = await turnsToAnswer(8, 48);
    const withOne = await turnsToAnswer(1, 48);
    expect(withEight).toBeLessThanOrEqual(16);
    expect(withOne).toBeGreaterThanOrEqual(40);
  });
});

describe('stopping the API server with extra acceptors', () => {
  it('answers the requests in flight on every handle before it resolves', async () => {
    let started = 0;
    let done = 0;
    const api = await startServer(
      8,
      makeExecutableSchema({
        typeDefs: 'type Query { slow(ms: Int!): Int }',
        resolvers: {
          Query: {
            slow: (_: unknown, a: { ms: number }) => {
              started++;
              return new Promise((r) =>
                setTimeout(() => {
                  done++;
                  r(1);
                }, a.ms),
              );
            },
          },
        },
      }),
      {
        verify: () =>
          Promise.resolve({
            iss: 'test',
            sub: 'u',
            tenant: 't',
            scopes: new Set(),
            actors: [],
            tokenId: undefined,
            expiresAt: undefined,
          }),
      },
    );
    // Different lengths, so the longest is on whichever handle accepted it.
    const calls = Array.from({ length: 24 }, (_, i) =>
      fetch(`http://127.0.0.1:${api.port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer x', connection: 'close' },
        body: JSON.stringify({ query: `{ slow(ms: ${100 + 40 * i}) }` }),
      }).then((r) => r.json()),
    );
    while (started < 24) await new Promise((r) => setTimeout(r, 10));
    await api.stop();
    expect(done).toBe(24);
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 24 }, () => ({ data: { slow: 1 } })));
  });

  it('does not wait for idle keep-alive connections, on whichever handle they came', async () => {
    const api = await startServer(8);
    // 32 connections, each with one answered request, then left open and idle.
    await Promise.all(
      Array.from(
        { length: 32 },
        () =>
          new Promise<void>((resolve) => {
            const c = connect(api.port, '127.0.0.1');
            clients.push(c);
            c.on('error', () => undefined);
            c.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
            c.once('data', () => resolve());
          }),
      ),
    );
    // Idle connections are closed at once; an extra handle that waited for its own would hold the stop
    // until the sockets time out (30 s here before this was fixed). 3 s separates the two.
    const outcome = await Promise.race([
      api.stop().then(() => 'stopped'),
      new Promise((r) => setTimeout(() => r('still waiting after 3 s'), 3_000)),
    ]);
    expect(outcome).toBe('stopped');
  });
});
