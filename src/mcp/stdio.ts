import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { callGraphQL } from '../client/graphql.ts';
import { Scopes, type Scope } from '../domain/principal.ts';
import type { Logger } from '../ports/logger.ts';
import { buildMcpServer } from './server.ts';
import type { ToolDef } from './tools.ts';

/**
 * The bridge over stdio: a local process a harness starts for its user. It holds only that user's own
 * token (MUNINN_TOKEN, audience: the API) and sends it with each tool call, exactly as the user's curl
 * would: the bridge is the user's client here, not a deputy, and no other credential exists in it.
 */
export interface McpStdioOptions {
  readonly token: string | undefined;
  readonly graphqlUrl: string;
  readonly tools: readonly ToolDef[];
  readonly writeTools: boolean;
  readonly logger: Logger;
}

/** Serves until stdin closes. */
export async function serveMcpStdio(o: McpStdioOptions): Promise<void> {
  const server = buildMcpServer({
    tools: o.tools,
    scopes: claimedScopes(o.token),
    writeTools: o.writeTools,
    logger: o.logger.child({ component: 'mcp' }),
    run: (tool, variables) =>
      callGraphQL({
        url: o.graphqlUrl,
        token: o.token,
        document: tool.document,
        operationName: tool.name,
        variables,
      }),
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    process.stdin.once('end', resolve);
  });
  await server.connect(transport);
  await closed;
  await server.close();
}

/**
 * The scopes the token claims, read WITHOUT verifying it: only to choose which tools to offer (a token
 * without `review` is not shown the review tools). Nothing is decided on them; the API verifies the token
 * and enforces every scope on every call. No token, no scopes beyond the read tools' (calls then fail
 * UNAUTHENTICATED at the API).
 */
export function claimedScopes(token: string | undefined): ReadonlySet<Scope> {
  const out = new Set<Scope>(['read']);
  const payload = token?.split('.')[1];
  if (!payload) return out;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const words = [
      ...(typeof claims['scope'] === 'string' ? claims['scope'].split(/\s+/) : []),
      ...(Array.isArray(claims['scp'])
        ? claims['scp'].filter((s): s is string => typeof s === 'string')
        : []),
    ];
    for (const w of words) if ((Scopes as readonly string[]).includes(w)) out.add(w as Scope);
  } catch {
    /* not a JWT: the API will say so */
  }
  return out;
}
