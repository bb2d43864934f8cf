import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, load } from '../../src/config/index.ts';
import { startMcpStack, type McpStack } from '../support/mcp.ts';

/**
 * CORS for dashboards: only origins in MUNINN_CORS_ORIGINS may call /graphql (and the MCP bridge) from a
 * browser; none by default. A refused preflight gets 403 and no Access-Control-Allow-Origin.
 */
const DASHBOARD = 'https://dash.example.com';
const FOREIGN = 'https://evil.example.net';
let stack: McpStack;

beforeAll(async () => {
  stack = await startMcpStack({ MUNINN_CORS_ORIGINS: `${DASHBOARD}, http://localhost:5173` });
});
afterAll(async () => stack?.stop());

const preflight = (url: string, origin: string, method = 'POST') =>
  fetch(url, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': 'authorization, content-type',
    },
  });

describe('CORS on /graphql', () => {
  it('a preflight from an allowed origin is answered 204 with that origin, the methods and the headers', async () => {
    const r = await preflight(stack.app.url, DASHBOARD);
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe(DASHBOARD);
    expect(r.headers.get('access-control-allow-methods')).toBe('GET, POST');
    expect(r.headers.get('access-control-allow-headers')).toContain('authorization');
    expect(r.headers.get('access-control-allow-credentials')).toBeNull();
    expect(r.headers.get('vary')).toContain('Origin');
  });

  it('a preflight from another origin, or for another method, is refused with 403 and no allow-origin', async () => {
    for (const r of [
      await preflight(stack.app.url, FOREIGN),
      await preflight(stack.app.url, DASHBOARD, 'DELETE'),
    ]) {
      expect(r.status).toBe(403);
      expect(r.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('a query from the dashboard carries allow-origin; one from another origin does not', async () => {
    const token = await stack.app.token({ tenant: 'cors', sub: 'dash' });
    const ask = (origin: string) =>
      fetch(stack.app.url, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query: '{ records(filter: { namespace: "acme" }) { totalCount } }' }),
      });
    const ok = await ask(DASHBOARD);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(DASHBOARD);
    expect(ok.headers.get('vary')).toContain('Origin');
    const foreign = await ask(FOREIGN);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS on the MCP bridge', () => {
  it('an allowed origin may preflight and sees the auth challenge headers; another origin is refused outright', async () => {
    const r = await preflight(stack.bridge.url, DASHBOARD);
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe(DASHBOARD);
    const challenged = await fetch(stack.bridge.url, {
      method: 'POST',
      headers: { origin: DASHBOARD, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(challenged.status).toBe(401);
    expect(challenged.headers.get('access-control-expose-headers')).toContain('www-authenticate');
    // DNS-rebinding defence: a browser request from an origin not configured never reaches auth or tools.
    const foreign = await fetch(stack.bridge.url, {
      method: 'POST',
      headers: { origin: FOREIGN, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(foreign.status).toBe(403);
    expect((await preflight(stack.bridge.url, FOREIGN)).status).toBe(403);
  });
});

describe('CORS configuration', () => {
  const base = { NEO4J_URI: 'bolt://x:1', KAFKA_BROKERS: 'x:1' };
  it('allows no origin by default and accepts only bare origins', () => {
    expect(load(base).corsOrigins).toEqual([]);
    expect(() => load({ ...base, MUNINN_CORS_ORIGINS: 'https://dash.example.com/app' })).toThrow(ConfigError);
    expect(() => load({ ...base, MUNINN_CORS_ORIGINS: 'not a url' })).toThrow(ConfigError);
  });
});
