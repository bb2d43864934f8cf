import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { callGraphQL } from '../client/graphql.ts';
import { isMuninnError } from '../domain/errors.ts';
import { hasScope, type Principal, type Scope } from '../domain/principal.ts';
import type { Logger } from '../ports/logger.ts';
import type { TokenVerifier } from '../ports/token-verifier.ts';
import { applyCors, type CorsPolicy } from '../api/cors.ts';
import type { TokenExchanger } from './exchange.ts';
import { buildMcpServer, type RunOperation } from './server.ts';
import type { ToolDef } from './tools.ts';

/**
 * The bridge over streamable HTTP, an OAuth 2.0 protected resource (MCP authorization, RFC 9728):
 * - every request to /mcp needs a bearer token whose audience is the bridge (MUNINN_MCP_AUDIENCE), checked
 *   by the one token verifier; otherwise 401 with `WWW-Authenticate: Bearer resource_metadata="…"`;
 * - /.well-known/oauth-protected-resource[/mcp] tells clients which authorization server to ask;
 * - the caller's token is never forwarded: each tool call uses a token exchanged for the API audience
 *   (see exchange.ts), so the API sees the caller as the subject and the bridge as the OAuth client.
 * Stateless: each POST builds a server for that request's principal (tools offered by its scopes), so no
 * session can outlive or be borrowed from the token that opened it.
 */
export interface McpHttpOptions {
  readonly host: string;
  readonly port: number;
  /** The bridge's resource identifier: the audience its callers' tokens must carry. */
  readonly resource: string;
  readonly authorizationServers: readonly string[];
  readonly verifier: TokenVerifier;
  readonly exchanger: TokenExchanger;
  readonly graphqlUrl: string;
  readonly tools: readonly ToolDef[];
  readonly writeTools: boolean;
  readonly corsOrigins: readonly string[];
  readonly maxBodyBytes: number;
  readonly logger: Logger;
}

export interface RunningMcpHttp {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

const PRM = '/.well-known/oauth-protected-resource';
const SUPPORTED_SCOPES: readonly Scope[] = ['read', 'write', 'review'];

/** What a request's handling reads: the options, the bridge's path and CORS policy, its metadata URL. */
interface HttpBridge {
  readonly o: McpHttpOptions;
  readonly log: Logger;
  readonly mcpPath: string;
  readonly cors: CorsPolicy;
  /** The protected-resource metadata's URL, known once the server listens (its port may be 0 until then). */
  metadataUrl: string;
}

const corsPolicy = (origins: readonly string[]): CorsPolicy => ({
  origins,
  methods: ['POST'],
  allowHeaders: ['authorization', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'],
  exposeHeaders: ['www-authenticate', 'mcp-session-id', 'mcp-protocol-version'],
});

const metadata = (o: McpHttpOptions) => ({
  resource: o.resource,
  authorization_servers: o.authorizationServers,
  scopes_supported: SUPPORTED_SCOPES,
  bearer_methods_supported: ['header'],
  resource_name: 'Muninn memory (MCP)',
});

async function handle(b: HttpBridge, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  if (path === '/healthz') return json(res, 200, { status: 'ok' });
  if (path === PRM || path === `${PRM}${b.mcpPath}`) {
    if (req.method !== 'GET') return json(res, 405, { error: 'method not allowed' });
    res.setHeader('access-control-allow-origin', '*'); // public metadata, no credentials
    return json(res, 200, metadata(b.o));
  }
  if (path !== b.mcpPath) return json(res, 404, { error: 'not found' });
  // DNS-rebinding defence (MCP transport spec): a browser origin must be one the config allows.
  const verdict = applyCors(req, res, b.cors);
  if (verdict === 'answered') return;
  if (verdict === 'foreign') return json(res, 403, { error: 'origin not allowed' });
  const caller = await authenticate(b, req, res);
  if (!caller) return;
  if (req.method !== 'POST') {
    res.setHeader('allow', 'POST');
    return json(res, 405, { error: 'method not allowed (stateless: POST only)' });
  }
  await serveMcp(b, req, res, caller);
}

interface Caller {
  readonly principal: Principal;
  readonly token: string;
}

/** The caller's principal and token, or a 401/403 already sent. */
async function authenticate(
  b: HttpBridge,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<Caller | undefined> {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  if (!m) {
    challenge(res, 401, `Bearer resource_metadata="${b.metadataUrl}"`, 'a bearer token is required');
    return undefined;
  }
  try {
    const principal = await b.o.verifier.verify(m[1]!);
    if (!hasScope(principal, 'read')) {
      challenge(
        res,
        403,
        `Bearer error="insufficient_scope", scope="read", resource_metadata="${b.metadataUrl}"`,
      );
      return undefined;
    }
    return { principal, token: m[1]! };
  } catch (e) {
    const why = isMuninnError(e) ? e.message : 'invalid token';
    challenge(
      res,
      401,
      `Bearer error="invalid_token", error_description="${why.replace(/["\\]/g, '')}", resource_metadata="${b.metadataUrl}"`,
      why,
    );
    return undefined;
  }
}

/** A tool call under a token exchanged for the API audience with `scopes`. */
function runTool(o: McpHttpOptions, caller: Caller, scopes: Scope[]): RunOperation {
  return async (tool, variables) => {
    let token: string;
    try {
      token = await o.exchanger.exchange(caller.token, scopes);
    } catch (e) {
      const code = isMuninnError(e) ? e.code : 'UNAVAILABLE';
      return {
        ok: false,
        errors: [{ code, message: isMuninnError(e) ? e.message : 'token exchange failed' }],
      };
    }
    return callGraphQL({
      url: o.graphqlUrl,
      token,
      document: tool.document,
      operationName: tool.name,
      variables,
    });
  };
}

async function serveMcp(
  b: HttpBridge,
  req: IncomingMessage,
  res: ServerResponse,
  caller: Caller,
): Promise<void> {
  const { o } = b;
  const body = await readJson(req, o.maxBodyBytes);
  if (body === TOO_LARGE) return json(res, 413, jsonRpcError(`request body exceeds ${o.maxBodyBytes} bytes`));
  if (body === undefined) return json(res, 400, jsonRpcError('request body is not JSON'));
  // The exchanged token asks only for what the offered tools need.
  const scopes: Scope[] = ['read'];
  if (o.writeTools && hasScope(caller.principal, 'write')) scopes.push('write');
  if (hasScope(caller.principal, 'review')) scopes.push('review');
  const server = buildMcpServer({
    tools: o.tools,
    scopes: new Set(scopes),
    writeTools: o.writeTools,
    logger: b.log,
    run: runTool(o, caller, scopes),
  });
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

export async function startMcpHttp(o: McpHttpOptions): Promise<RunningMcpHttp> {
  const resourceUrl = URL.canParse(o.resource) ? new URL(o.resource) : undefined;
  const b: HttpBridge = {
    o,
    log: o.logger.child({ component: 'mcp' }),
    mcpPath: resourceUrl && resourceUrl.pathname !== '/' ? resourceUrl.pathname : '/mcp',
    cors: corsPolicy(o.corsOrigins),
    metadataUrl: '',
  };
  const http: Server = createServer((req, res) => {
    handle(b, req, res).catch((e: unknown) => {
      b.log.error({ err: e instanceof Error ? e.message : String(e) }, 'mcp request failed');
      if (!res.headersSent) json(res, 500, jsonRpcError('internal error'));
    });
  });
  http.requestTimeout = 120_000;
  http.headersTimeout = 15_000;
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(o.port, o.host, () => resolve());
  });
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : o.port;
  const origin = resourceUrl ? resourceUrl.origin : `http://${o.host}:${port}`;
  b.metadataUrl = `${origin}${PRM}${b.mcpPath}`;
  const url = `http://${o.host}:${port}${b.mcpPath}`;
  b.log.info({ url, resource: o.resource }, 'mcp bridge listening');
  return {
    url,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeIdleConnections();
        setTimeout(() => http.closeAllConnections(), 5000).unref();
      }),
  };
}

function challenge(res: ServerResponse, status: 401 | 403, header: string, message?: string): void {
  res.setHeader('www-authenticate', header);
  json(res, status, jsonRpcError(message ?? (status === 401 ? 'unauthorized' : 'insufficient scope')));
}

const jsonRpcError = (message: string) => ({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });

function json(res: ServerResponse, status: number, body: unknown): void {
  const s = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s) });
  res.end(s);
}

const TOO_LARGE = Symbol('too large');

async function readJson(req: IncomingMessage, max: number): Promise<unknown> {
  if (Number(req.headers['content-length'] ?? 0) > max) return TOO_LARGE;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return TOO_LARGE;
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
