import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningMcpHttp } from '../../src/mcp/http.ts';
import { freshTenant, type TestApp } from '../support/harness.ts';
import { call, httpClient, startMcpStack, type McpStack } from '../support/mcp.ts';

/**
 * The HTTP bridge as an OAuth protected resource, against a running Muninn on the real stack: a token
 * minted for the bridge is useless at the API, only the authenticated bridge can exchange it (RFC 8693) and
 * only for the same subject with the bridge as actor, 401s point at the protected-resource metadata, and no
 * browser origin is allowed by default.
 */

let stack: McpStack;
let app: TestApp;
let bridge: RunningMcpHttp;
let audience: string;
const tenant = freshTenant('mcpauth');

beforeAll(async () => {
  stack = await startMcpStack();
  ({ app, bridge, audience } = stack);
});
afterAll(async () => stack?.stop());

describe('token exchange at the HTTP bridge (no token passthrough)', () => {
  const tokenEndpoint = () => app.url.replace(/graphql$/, 'dev/token');
  const claims = (jwt: string) =>
    JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
  const exchange = (subject: string, auth: string | undefined, extra: Record<string, string> = {}) =>
    fetch(tokenEndpoint(), {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(auth ? { authorization: auth } : {}),
      },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: subject,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        audience: app.config.auth.audience,
        ...extra,
      }),
    });
  const basic = (secret: string) =>
    `Basic ${Buffer.from(`${app.config.mcp.clientId}:${secret}`).toString('base64')}`;

  it('no browser origin is allowed by default (CORS), on the API or the bridge', async () => {
    for (const url of [app.url, bridge.url]) {
      const r = await fetch(url, {
        method: 'OPTIONS',
        headers: { origin: 'https://dash.example.com', 'access-control-request-method': 'POST' },
      });
      expect(r.status).toBe(403);
      expect(r.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('a token minted for the bridge is refused by the API itself', async () => {
    const bridgeToken = await app.token({ tenant, sub: 'alice', audience });
    const r = await app.gql(bridgeToken, '{ records(filter: { namespace: "acme" }) { totalCount } }');
    expect(r.status).toBe(401);
  });

  it('only the authenticated bridge can exchange, only bridge tokens, for the same subject with the bridge as client', async () => {
    const subject = await app.token({
      tenant,
      sub: 'alice',
      scopes: ['read', 'write'],
      audience,
      ttlSeconds: 120,
    });
    expect((await exchange(subject, undefined)).status).toBe(401);
    expect((await exchange(subject, basic('x'.repeat(48)))).status).toBe(401);
    const apiToken = await app.token({ tenant, sub: 'alice' });
    const wrongAudience = await exchange(apiToken, basic(app.config.mcp.clientSecret!));
    expect(wrongAudience.status).toBe(400);
    expect(((await wrongAudience.json()) as { error: string }).error).toBe('invalid_grant');

    const ok = await exchange(subject, basic(app.config.mcp.clientSecret!), { scope: 'read' });
    expect(ok.status).toBe(200);
    const body = (await ok.json()) as { access_token: string; expires_in: number };
    const c = claims(body.access_token);
    expect(c['aud']).toBe(app.config.auth.audience);
    expect(c['sub']).toBe('alice');
    expect(c['tenant']).toBe(tenant);
    expect(c['scope']).toBe('read');
    expect(c['client_id']).toBe(app.config.mcp.clientId);
    expect(c['act']).toBeUndefined(); // impersonation: the caller's own chain, the bridge is the client
    expect(c['exp'] as number).toBeLessThanOrEqual(claims(subject)['exp'] as number);
    const r = await app.gql(body.access_token, '{ records(filter: { namespace: "acme" }) { totalCount } }');
    expect(r.status).toBe(200);

    // The caller's own agent stays in the delegation chain; the bridge does not join it.
    const viaAgent = await app.token({ tenant, sub: 'alice', audience, act: { sub: 'coding-agent' } });
    const delegated = await exchange(viaAgent, basic(app.config.mcp.clientSecret!));
    const dc = claims(((await delegated.json()) as { access_token: string }).access_token);
    expect(dc['act']).toEqual({ sub: 'coding-agent' });
    expect(dc['client_id']).toBe(app.config.mcp.clientId);
  });

  it('401 answers carry WWW-Authenticate with the protected-resource metadata, which names the bridge', async () => {
    const none = await fetch(bridge.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(none.status).toBe(401);
    const header = none.headers.get('www-authenticate')!;
    const m = /^Bearer resource_metadata="([^"]+)"$/.exec(header);
    expect(m).not.toBeNull();
    const prmUrl = m![1]!.replace(new URL(audience).origin, new URL(bridge.url).origin);
    const prm = (await (await fetch(prmUrl)).json()) as Record<string, unknown>;
    expect(prm['resource']).toBe(audience);
    expect(prm['scopes_supported']).toEqual(['read', 'write', 'review']);
    expect(prm['bearer_methods_supported']).toEqual(['header']);

    const apiToken = await app.token({ tenant, sub: 'alice' }); // audience: the API, not the bridge
    const wrong = await fetch(bridge.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiToken}` },
      body: '{}',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(
      /^Bearer error="invalid_token", error_description="[^"]*aud[^"]*", resource_metadata="/,
    );
  });

  it('writes through the bridge are the subject’s own: proposedBy is the caller, never the bridge', async () => {
    const c = await httpClient(
      bridge.url,
      await app.token({ tenant, sub: 'bob', scopes: ['read', 'write'], audience }),
    );
    stack.clients.push(c);
    const r = await call(c, 'remember', {
      namespace: 'acme/mcp-actor',
      class: 'FACT',
      purpose: 'test',
      idempotencyKey: randomUUID(),
      await: true,
      statement: {
        subject: 'actor-check',
        predicate: 'is',
        object: 'bob',
        text: `Actor check ${randomUUID()}.`,
      },
    });
    const id = (r.data['propose'] as { recordId: string }).recordId;
    const admin = await app.token({ tenant, sub: 'root', scopes: ['admin'] });
    const rec = await app.gql<{ record: { proposedBy: string } }>(
      admin,
      `{ record(id: "${id}") { proposedBy } }`,
    );
    expect(rec.data!.record.proposedBy).toBe(`${app.config.auth.issuer}|bob`);
  });
});
