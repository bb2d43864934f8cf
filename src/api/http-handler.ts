import type { IncomingMessage, ServerResponse } from 'node:http';
import { HeaderMap, type ApolloServer } from '@apollo/server';
import type { Logger } from '../ports/logger.ts';
import type { TokenVerifier } from '../ports/token-verifier.ts';
import type { SpanOptions, Tracing } from '../ports/tracing.ts';
import { authenticate, type ApiContext } from './context.ts';
import { applyCors, type CorsPolicy } from './cors.ts';
import { serveConsole, type loadConsoleAssets } from './console.ts';

/** A POST endpoint taking an `application/x-www-form-urlencoded` body (OAuth style) and answering JSON. */
export type FormRoute = (
  form: URLSearchParams,
  authorization: string | undefined,
) => Promise<{ readonly status: number; readonly body: unknown; readonly headers?: Record<string, string> }>;

/** A GraphQL endpoint with its Apollo server started. */
export interface StartedEndpoint {
  readonly apollo: ApolloServer<ApiContext>;
  readonly verifier: TokenVerifier;
  readonly cors: boolean;
}

/** What one HTTP server answers: its GraphQL endpoints by path, probes, form routes and the console. */
export interface Routes {
  readonly endpoints: Readonly<Record<string, StartedEndpoint>>;
  readonly formRoutes: Readonly<Record<string, FormRoute>> | undefined;
  readonly readiness: () => Promise<{ ready: boolean; checks: Record<string, string> }>;
  readonly consoleAssets: ReturnType<typeof loadConsoleAssets> | null;
  readonly cors: CorsPolicy;
  readonly tracing: Tracing;
  readonly maxBodyBytes: number;
  readonly log: Logger;
}

export async function handleRequest(r: Routes, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === '/healthz') return sendJson(res, 200, { status: 'ok' });
  const endpoint = r.endpoints[url.pathname];
  // Other origins are served without CORS headers (the browser keeps the response from them).
  if (endpoint?.cors && applyCors(req, res, r.cors) === 'answered') return;
  const form = r.formRoutes?.[url.pathname];
  if (form) return serveForm(req, res, form, r.maxBodyBytes);
  if (url.pathname === '/readyz') {
    const ready = await r.readiness().catch((e: unknown) => ({ ready: false, checks: { error: String(e) } }));
    return sendJson(res, ready.ready ? 200 : 503, ready);
  }
  if (r.consoleAssets && serveConsole(r.consoleAssets, req, res, url.pathname)) return;
  if (!endpoint) return sendJson(res, 404, { error: 'not found' });
  if (req.method !== 'POST' && req.method !== 'GET')
    return sendJson(res, 405, { error: 'method not allowed' });
  return serveGraphql(r, endpoint, req, res, url);
}

async function serveGraphql(
  r: Routes,
  endpoint: StartedEndpoint,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const body = await graphqlBody(req, res, r.maxBodyBytes);
  if (body === 'answered') return;
  const headers = new HeaderMap();
  for (const [k, v] of Object.entries(req.headers))
    if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  const method = req.method!;
  const execute = () =>
    endpoint.apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method, headers, search: url.search, body: body.parsed },
      context: async () => ({
        principal: await authenticate(endpoint.verifier, req.headers.authorization, {
          log: r.log,
          transport: url.pathname === '/graphql' ? 'http' : `http${url.pathname}`,
          remote: req.socket.remoteAddress,
        }),
      }),
    });
  const result = await r.tracing.inSpan(`${method} ${url.pathname}`, spanOf(req, url.pathname), execute);
  for (const [k, v] of result.headers) res.setHeader(k, v);
  res.statusCode = result.status ?? 200;
  if (result.body.kind === 'complete') {
    res.end(result.body.string);
  } else {
    for await (const chunk of result.body.asyncIterator) res.write(chunk);
    res.end();
  }
}

/** The request's body (JSON for a POST, none for a GET), or 'answered' when it was refused. */
async function graphqlBody(
  req: IncomingMessage,
  res: ServerResponse,
  maxBodyBytes: number,
): Promise<{ parsed: unknown } | 'answered'> {
  const body = await readBody(req, maxBodyBytes);
  if (body === 'too-large') {
    sendJson(res, 413, {
      errors: [
        {
          message: `request body exceeds ${maxBodyBytes} bytes`,
          extensions: { code: 'BAD_USER_INPUT' },
        },
      ],
    });
    return 'answered';
  }
  if (req.method !== 'POST') return { parsed: undefined };
  try {
    return { parsed: body.length ? JSON.parse(body) : {} };
  } catch {
    sendJson(res, 400, {
      errors: [{ message: 'request body is not JSON', extensions: { code: 'BAD_USER_INPUT' } }],
    });
    return 'answered';
  }
}

/**
 * The request's server span: it continues a caller's `traceparent` (only that: a caller's `tracestate`
 * would otherwise ride along into the ledger's message headers). The audit span is its child: it is
 * written once the outcome is known, too late to be the parent of what the operation appends.
 */
function spanOf(req: IncomingMessage, path: string): SpanOptions {
  const traceparent = req.headers.traceparent;
  return {
    kind: 'server',
    attributes: { 'http.request.method': req.method ?? '', 'url.path': path },
    ...(typeof traceparent === 'string' ? { parent: { traceparent } } : {}),
  };
}

async function serveForm(
  req: IncomingMessage,
  res: ServerResponse,
  route: FormRoute,
  maxBodyBytes: number,
): Promise<void> {
  if (req.method !== 'POST') return sendJson(res, 405, { error: 'invalid_request' });
  const body = await readBody(req, maxBodyBytes);
  if (body === 'too-large') return sendJson(res, 413, { error: 'invalid_request' });
  const r = await route(new URLSearchParams(body), req.headers.authorization);
  for (const [k, v] of Object.entries(r.headers ?? {})) res.setHeader(k, v);
  // RFC 6749 §5.1: token responses are never cached.
  res.setHeader('cache-control', 'no-store');
  sendJson(res, r.status, r.body);
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const s = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(s),
  });
  res.end(s);
}

async function readBody(req: IncomingMessage, max: number): Promise<string | 'too-large'> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > max) {
    req.resume();
    return 'too-large';
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) {
      req.resume();
      return 'too-large';
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
