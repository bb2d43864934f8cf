import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { load } from '../../src/config/index.ts';
import { startMcpHttpBridge } from '../../src/cli/mcp.ts';
import type { RunningMcpHttp } from '../../src/mcp/http.ts';
import { silentLogger } from '../../src/ports/logger.ts';
import { endpoints, startApp, type TestApp } from './harness.ts';
import { freePort, REPO_ROOT } from './processes.ts';

/** Helpers for driving the MCP bridge with the SDK's own client, over either transport. */
export const REPO = REPO_ROOT;

/** Starting `node --import tsx` on a loaded 2-core machine can take more than the SDK's default minute. */
const CONNECT_TIMEOUT_MS = 180_000;

export async function httpClient(url: string, token: string | undefined): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: token ? { authorization: `Bearer ${token}` } : {} },
  });
  const client = new Client({ name: 'muninn-test', version: '1.0.0' });
  await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
  return client;
}

/** `muninn mcp` as a harness starts it: a child process speaking MCP on stdin/stdout. */
export async function stdioClient(env: Record<string, string>): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', 'src/cli/main.ts', 'mcp'],
    cwd: REPO,
    env: { ...getDefaultEnvironment(), MUNINN_LOG_LEVEL: 'error', ...env },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'muninn-test', version: '1.0.0' });
  await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
  return client;
}

export interface ToolOutcome {
  readonly isError: boolean;
  readonly data: Record<string, unknown>;
  readonly codes: string[];
}

/** A tool call's outcome: its structured content, and the error codes when it failed. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolOutcome> {
  // Writes that wait for the projection can take long on a loaded 2-core machine: no client timeout here.
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 300_000 });
  const data = (r.structuredContent ?? {}) as Record<string, unknown>;
  const errors = (data['errors'] ?? []) as Array<{ code: string }>;
  return { isError: r.isError === true, data, codes: errors.map((e) => e.code) };
}

/** Muninn on the real stack, serving the development token endpoint, plus two HTTP bridges (write tools on/off). */
export interface McpStack {
  readonly app: TestApp;
  readonly bridge: RunningMcpHttp;
  readonly readOnlyBridge: RunningMcpHttp;
  /** The bridges' resource identifier: the audience their callers' tokens carry. */
  readonly audience: string;
  /** Clients to close at the end. */
  readonly clients: Client[];
  stop(): Promise<void>;
}

/** What the app needs so that bridges can exchange tokens at its development token endpoint. */
export async function mcpAppConfig(extra: Record<string, string> = {}) {
  const port = await freePort();
  return {
    port,
    audience: `http://127.0.0.1:${port}/mcp`,
    env: {
      MUNINN_MCP_CLIENT_SECRET: randomBytes(24).toString('hex'),
      MUNINN_MCP_AUDIENCE: `http://127.0.0.1:${port}/mcp`,
      // Expired means expired: no skew, so a 1 s token is refused a second later.
      MUNINN_AUTH_CLOCK_SKEW_S: '0',
      // Writes that wait for the projection: generous on a loaded 2-core machine (a miss is PENDING).
      MUNINN_AWAIT_TIMEOUT_MS: '120000',
      ...extra,
    } as Record<string, string>,
  };
}

export async function startMcpStack(extra: Record<string, string> = {}): Promise<McpStack> {
  const cfg = await mcpAppConfig(extra);
  return bridgesFor(await startApp(cfg.env), cfg);
}

/** Two HTTP bridges (write tools on and off) in front of a running app started with `cfg.env`. */
export async function bridgesFor(
  app: TestApp,
  cfg: { port: number; audience: string; env: Record<string, string> },
): Promise<McpStack> {
  const bridgeEnv = {
    ...endpoints(),
    ...cfg.env,
    MUNINN_ENV: 'test',
    MUNINN_STATE_DIR: app.config.stateDir,
    MUNINN_LOG_LEVEL: 'silent',
    MUNINN_GRAPHQL_URL: app.url,
    MUNINN_MCP_EXCHANGE_URL: app.url.replace(/graphql$/, 'dev/token'),
  };
  const bridge = await startMcpHttpBridge(
    load({ ...bridgeEnv, MUNINN_MCP_PORT: String(cfg.port), MUNINN_MCP_WRITE_TOOLS: 'true' }),
    silentLogger,
  );
  const readOnlyBridge = await startMcpHttpBridge(
    load({ ...bridgeEnv, MUNINN_MCP_PORT: String(await freePort()), MUNINN_MCP_WRITE_TOOLS: 'false' }),
    silentLogger,
  );
  const clients: Client[] = [];
  return {
    app,
    bridge,
    readOnlyBridge,
    audience: cfg.audience,
    clients,
    async stop() {
      await Promise.allSettled(clients.map((c) => c.close()));
      await readOnlyBridge.stop();
      await bridge.stop();
      await app.stop();
    },
  };
}

export interface CallerSpec {
  readonly sub: string;
  readonly scopes: string[];
  readonly tenant?: string;
  readonly ttlSeconds?: number;
  readonly writeTools?: boolean;
  readonly token?: 'none';
}

export interface TransportCase {
  readonly name: 'http' | 'stdio';
  connect(c: CallerSpec): Promise<Client>;
  /** How a refused credential shows: HTTP refuses the connection (401), stdio every call (UNAUTHENTICATED). */
  expectRefused(c: CallerSpec): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The same caller over either transport. HTTP: a token for the bridge's audience (exchanged by the bridge).
 * stdio: `muninn mcp` started with the user's own API token in MUNINN_TOKEN.
 */
export function mcpTransports(stack: () => McpStack, tenant: string): TransportCase[] {
  const tokenFor = (c: CallerSpec, aud: string | undefined) =>
    c.token === 'none'
      ? Promise.resolve(undefined)
      : stack().app.token({
          tenant: c.tenant ?? tenant,
          sub: c.sub,
          scopes: c.scopes,
          ttlSeconds: c.ttlSeconds ?? 600,
          ...(aud ? { audience: aud } : {}),
        });
  const keep = (c: Client) => {
    stack().clients.push(c);
    return c;
  };
  const http: TransportCase = {
    name: 'http',
    async connect(c) {
      const s = stack();
      const url = c.writeTools === false ? s.readOnlyBridge.url : s.bridge.url;
      return keep(await httpClient(url, await tokenFor(c, s.audience)));
    },
    async expectRefused(c) {
      const token = await tokenFor(c, stack().audience);
      if (c.ttlSeconds) await sleep(c.ttlSeconds * 1000 + 200);
      const refused = await httpClient(stack().bridge.url, token).then(
        () => undefined,
        (e: unknown) => e as { code?: unknown; message: string },
      );
      expect(refused?.code).toBe(401);
      expect(refused?.message).toMatch(c.token === 'none' ? /bearer token is required/ : /expired/);
    },
  };
  const stdio: TransportCase = {
    name: 'stdio',
    async connect(c) {
      const token = await tokenFor(c, undefined);
      return keep(
        await stdioClient({
          ...(token ? { MUNINN_TOKEN: token } : {}),
          MUNINN_GRAPHQL_URL: stack().app.url,
          MUNINN_MCP_WRITE_TOOLS: String(c.writeTools ?? true),
        }),
      );
    },
    async expectRefused(c) {
      const client = await stdio.connect(c);
      if (c.ttlSeconds) await sleep(c.ttlSeconds * 1000 + 200);
      const r = await call(client, 'query', { namespace: 'acme' });
      expect(r.isError).toBe(true);
      expect(r.codes).toEqual(['UNAUTHENTICATED']);
    },
  };
  return [http, stdio];
}
