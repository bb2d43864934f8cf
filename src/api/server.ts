import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ApolloServer, HeaderMap } from '@apollo/server';
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { GraphQLSchema } from 'graphql';
import type { Logger } from '../ports/logger.ts';
import type { TokenVerifier } from '../ports/token-verifier.ts';
import { authenticate, type ApiContext } from './context.ts';
import { applyCors, graphqlCors } from './cors.ts';
import { formatError } from './errors.ts';
import { loadConsoleAssets, serveConsole } from './console.ts';
import { apolloLimitsPlugin, limitRules, type QueryLimits } from './limits.ts';
import { apolloMetricsPlugin } from './metrics-plugin.ts';
import { apolloAuditPlugin } from './audit-plugin.ts';
import { noAudit, type AuditLog } from '../ports/audit.ts';
import { noTelemetry, type Telemetry } from '../ports/telemetry.ts';
import { noTracing, type SpanOptions, type Tracing } from '../ports/tracing.ts';
import { buildResolvers } from './resolvers.ts';
import type { ApiServices } from './services.ts';
import { attachGraphqlWs } from './ws.ts';
import { addAcceptors } from './acceptors.ts';

const SCHEMA_PATH = fileURLToPath(new URL('../../schema.graphql', import.meta.url));

export interface ApiOptions {
  readonly host: string;
  readonly port: number;
  readonly introspection: boolean;
  /** Serve the operator console at /console (off in production unless enabled). */
  readonly console?: boolean;
  readonly limits: ServerLimits;
  /** Handles accepting connections on the port, each one more per loop turn (acceptors.ts); default 1. */
  readonly acceptors?: number;
  readonly verifier: TokenVerifier;
  /** The verifier's clock skew: a WebSocket closes when HTTP would start refusing its token. */
  readonly clockSkewS: number;
  readonly services: ApiServices;
  readonly logger: Logger;
  /** Browser origins allowed to call /graphql (CORS); none when absent. */
  readonly corsOrigins?: readonly string[];
  /** Form-encoded POST endpoints served beside GraphQL (the development token endpoint). */
  readonly formRoutes?: Readonly<Record<string, FormRoute>>;
  /** Where every operation of a known caller leaves one entry (who, purpose, op, ids, code). */
  readonly audit?: AuditLog;
  /** Where GraphQL operations are counted and timed (Prometheus when enabled). */
  readonly telemetry?: Telemetry;
  /** A server span per GraphQL request over HTTP: what the request appends continues its trace. */
  readonly tracing?: Tracing;
  /** Liveness is "the process answers"; readiness is this. */
  readonly readiness: () => Promise<{ ready: boolean; checks: Record<string, string> }>;
}

export type ServerLimits = QueryLimits & {
  readonly maxBodyBytes: number;
  readonly maxWsSubscriptions: number;
};

/** One GraphQL schema served over HTTP at a path, with its own credential rules. */
export interface GraphqlEndpoint {
  readonly schema: GraphQLSchema;
  readonly verifier: TokenVerifier;
  readonly introspection: boolean;
  /** Answer CORS preflights and add CORS headers for the server's `corsOrigins`. */
  readonly cors?: boolean;
}

/**
 * What any Muninn HTTP surface is made of: GraphQL endpoints by path, optionally GraphQL over WebSocket on
 * one of them, /healthz and /readyz, form routes and the console. The main API (`startApi`) and the
 * private handoff surface (`muninn handoff serve`) are both this server with different endpoints.
 */
export interface GraphqlServerOptions {
  /** Names the surface in logs ("api", "handoff"). */
  readonly component: string;
  readonly host: string;
  readonly port: number;
  readonly limits: ServerLimits;
  /** Handles accepting connections on the port, each one more per loop turn (acceptors.ts); default 1. */
  readonly acceptors?: number;
  readonly logger: Logger;
  /** Keyed by path; the first one is the surface's `url`. */
  readonly endpoints: Readonly<Record<string, GraphqlEndpoint>>;
  /** graphql-ws on the endpoint at `path` (the verifier's clock skew closes sockets in time). */
  readonly ws?: { readonly path: string; readonly clockSkewS: number };
  readonly console?: boolean;
  readonly corsOrigins?: readonly string[];
  readonly formRoutes?: Readonly<Record<string, FormRoute>>;
  readonly audit?: AuditLog;
  readonly telemetry?: Telemetry;
  /** A server span per GraphQL request (no-op unless tracing is registered). */
  readonly tracing?: Tracing;
  readonly readiness: () => Promise<{ ready: boolean; checks: Record<string, string> }>;
}

/** A POST endpoint taking an `application/x-www-form-urlencoded` body (OAuth style) and answering JSON. */
export type FormRoute = (
  form: URLSearchParams,
  authorization: string | undefined,
) => Promise<{ readonly status: number; readonly body: unknown; readonly headers?: Record<string, string> }>;

export interface RunningApi {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

export function buildSchema(services: ApiServices): GraphQLSchema {
  return makeExecutableSchema({
    typeDefs: readFileSync(SCHEMA_PATH, 'utf8'),
    resolvers: buildResolvers(services),
  });
}

/** The main API: GraphQL over HTTP (Apollo) and over WebSocket (graphql-ws) on /graphql, plus probes. */
export function startApi(o: ApiOptions): Promise<RunningApi> {
  const { services, verifier, introspection, clockSkewS, ...rest } = o;
  return startGraphqlServer({
    ...rest,
    component: 'api',
    endpoints: { '/graphql': { schema: buildSchema(services), verifier, introspection, cors: true } },
    ws: { path: '/graphql', clockSkewS },
  });
}

/** One HTTP server for the given GraphQL endpoints, plus probes (see GraphqlServerOptions). */
export async function startGraphqlServer(o: GraphqlServerOptions): Promise<RunningApi> {
  const log = o.logger.child({ component: o.component });
  const rules = limitRules(o.limits);
  const endpoints: Record<
    string,
    { apollo: ApolloServer<ApiContext>; verifier: TokenVerifier; cors: boolean }
  > = {};
  for (const [path, e] of Object.entries(o.endpoints)) {
    const apollo = new ApolloServer<ApiContext>({
      schema: e.schema,
      introspection: e.introspection,
      includeStacktraceInErrorResponses: false,
      validationRules: rules,
      parseOptions: { maxTokens: o.limits.maxTokens },
      formatError: formatError(log),
      plugins: [
        apolloLimitsPlugin<ApiContext>(o.limits),
        apolloMetricsPlugin<ApiContext>(o.telemetry ?? noTelemetry),
        apolloAuditPlugin<ApiContext>(o.audit ?? noAudit, log),
      ],
      csrfPrevention: true,
      // Muninn drains on SIGTERM itself (main.ts: stop accepting, finish the batch in flight, close).
      // Apollo's own handler would stop just Apollo and then re-raise the signal, killing the process
      // mid-drain (it only stays out of the way when NODE_ENV=test, so tests never saw it).
      stopOnTerminationSignals: false,
    });
    await apollo.start();
    endpoints[path] = { apollo, verifier: e.verifier, cors: e.cors ?? false };
  }
  const consoleAssets = o.console ? loadConsoleAssets() : null;

  const http = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      log.error({ err: String(e) }, 'request failed');
      if (!res.headersSent)
        sendJson(res, 500, { errors: [{ message: 'internal error', extensions: { code: 'INTERNAL' } }] });
    });
  });
  http.requestTimeout = 60_000;
  http.headersTimeout = 15_000;

  const cors = graphqlCors(o.corsOrigins ?? []);
  const tracing = o.tracing ?? noTracing;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/healthz') return sendJson(res, 200, { status: 'ok' });
    const endpoint = endpoints[url.pathname];
    // Other origins are served without CORS headers (the browser keeps the response from them).
    if (endpoint?.cors && applyCors(req, res, cors) === 'answered') return;
    const form = o.formRoutes?.[url.pathname];
    if (form) return serveForm(req, res, form, o.limits.maxBodyBytes);
    if (url.pathname === '/readyz') {
      const r = await o.readiness().catch((e: unknown) => ({ ready: false, checks: { error: String(e) } }));
      return sendJson(res, r.ready ? 200 : 503, r);
    }
    if (consoleAssets && serveConsole(consoleAssets, req, res, url.pathname)) return;
    if (!endpoint) return sendJson(res, 404, { error: 'not found' });
    if (req.method !== 'POST' && req.method !== 'GET')
      return sendJson(res, 405, { error: 'method not allowed' });
    const body = await readBody(req, o.limits.maxBodyBytes);
    if (body === 'too-large') {
      return sendJson(res, 413, {
        errors: [
          {
            message: `request body exceeds ${o.limits.maxBodyBytes} bytes`,
            extensions: { code: 'BAD_USER_INPUT' },
          },
        ],
      });
    }
    let parsed: unknown = undefined;
    if (req.method === 'POST') {
      try {
        parsed = body.length ? JSON.parse(body) : {};
      } catch {
        return sendJson(res, 400, {
          errors: [{ message: 'request body is not JSON', extensions: { code: 'BAD_USER_INPUT' } }],
        });
      }
    }
    const headers = new HeaderMap();
    for (const [k, v] of Object.entries(req.headers))
      if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    const method = req.method;
    const execute = () =>
      endpoint.apollo.executeHTTPGraphQLRequest({
        httpGraphQLRequest: { method, headers, search: url.search, body: parsed },
        context: async () => ({
          principal: await authenticate(endpoint.verifier, req.headers.authorization, {
            log,
            transport: url.pathname === '/graphql' ? 'http' : `http${url.pathname}`,
            remote: req.socket.remoteAddress,
          }),
        }),
      });
    const result = await tracing.inSpan(`${method} ${url.pathname}`, spanOf(req, url.pathname), execute);
    for (const [k, v] of result.headers) res.setHeader(k, v);
    res.statusCode = result.status ?? 200;
    if (result.body.kind === 'complete') {
      res.end(result.body.string);
    } else {
      for await (const chunk of result.body.asyncIterator) res.write(chunk);
      res.end();
    }
  }

  const wsEndpoint = o.ws ? o.endpoints[o.ws.path] : undefined;
  const ws =
    o.ws && wsEndpoint
      ? attachGraphqlWs(http, {
          path: o.ws.path,
          schema: wsEndpoint.schema,
          limits: o.limits,
          rules,
          verifier: wsEndpoint.verifier,
          clockSkewS: o.ws.clockSkewS,
          log,
          audit: o.audit ?? noAudit,
          tracing,
        })
      : undefined;

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen({ port: o.port, host: o.host, backlog: LISTEN_BACKLOG }, () => resolve());
  });
  const acceptors = await addAcceptors(http, o.acceptors ?? 1, LISTEN_BACKLOG, (e) =>
    log.warn({ err: String(e) }, 'extra connection acceptor failed'),
  );
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : o.port;
  const url = `http://${o.host}:${port}${Object.keys(o.endpoints)[0] ?? '/'}`;
  log.info({ url, acceptors: acceptors.count }, `${o.component} listening`);
  return {
    url,
    port,
    stop: async () => {
      await ws?.dispose();
      const acceptorsDrained = acceptors.close();
      await closeServer(http);
      await acceptorsDrained;
      for (const e of Object.values(endpoints)) await e.apollo.stop();
    },
  };
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

function closeServer(s: Server): Promise<void> {
  return new Promise((resolve) => {
    s.close(() => resolve());
    s.closeIdleConnections();
    setTimeout(() => s.closeAllConnections(), 5000).unref();
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const s = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(s),
  });
  res.end(s);
}

/**
 * Connections the kernel holds for this server before it accepts them (Node's default is 511; Linux caps
 * it at net.core.somaxconn). When the queue is full, new connections' SYNs are dropped and each client
 * retries after 1, 3, 7, 15 s: a connect timeout rather than an answer. bench:ledger at 300 writes/s
 * offered (twice the sustained rate): 2,312 listen-queue overflows in one 20 s run with 511, none with
 * 4,096 (`netstat -s`, "times the listen queue of a socket overflowed").
 */
const LISTEN_BACKLOG = 4096;

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
