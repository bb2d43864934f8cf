import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ApolloServer } from '@apollo/server';
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { GraphQLSchema, ValidationRule } from 'graphql';
import type { Logger } from '../ports/logger.ts';
import type { TokenVerifier } from '../ports/token-verifier.ts';
import type { ApiContext } from './context.ts';
import { graphqlCors } from './cors.ts';
import { formatError } from './errors.ts';
import { loadConsoleAssets } from './console.ts';
import { apolloLimitsPlugin, limitRules, type QueryLimits } from './limits.ts';
import { apolloMetricsPlugin } from './metrics-plugin.ts';
import { apolloAuditPlugin } from './audit-plugin.ts';
import { noAudit, type AuditLog } from '../ports/audit.ts';
import { noTelemetry, type Telemetry } from '../ports/telemetry.ts';
import { noTracing, type Tracing } from '../ports/tracing.ts';
import { buildResolvers } from './resolvers.ts';
import type { ApiServices } from './services.ts';
import { attachGraphqlWs } from './ws.ts';
import { addAcceptors } from './acceptors.ts';
import {
  handleRequest,
  sendJson,
  type FormRoute,
  type Routes,
  type StartedEndpoint,
} from './http-handler.ts';

export type { FormRoute };

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
  const endpoints = await startEndpoints(o, log, rules);
  const routes: Routes = {
    endpoints,
    formRoutes: o.formRoutes,
    readiness: o.readiness,
    consoleAssets: o.console ? loadConsoleAssets() : null,
    cors: graphqlCors(o.corsOrigins ?? []),
    tracing: o.tracing ?? noTracing,
    maxBodyBytes: o.limits.maxBodyBytes,
    log,
  };
  const http = createServer((req, res) => {
    handleRequest(routes, req, res).catch((e: unknown) => {
      log.error({ err: String(e) }, 'request failed');
      if (!res.headersSent)
        sendJson(res, 500, { errors: [{ message: 'internal error', extensions: { code: 'INTERNAL' } }] });
    });
  });
  http.requestTimeout = 60_000;
  http.headersTimeout = 15_000;
  const ws = attachWs(http, o, rules, log, routes.tracing);
  const { acceptors, port } = await listen(http, o, log);
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

/** `http` listening, with its extra acceptors; `port` is the one bound (port 0 asks for any). */
async function listen(http: Server, o: GraphqlServerOptions, log: Logger) {
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen({ port: o.port, host: o.host, backlog: LISTEN_BACKLOG }, () => resolve());
  });
  const acceptors = await addAcceptors(http, o.acceptors ?? 1, LISTEN_BACKLOG, (e) =>
    log.warn({ err: String(e) }, 'extra connection acceptor failed'),
  );
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : o.port;
  return { acceptors, port };
}

/** An Apollo server per endpoint, started one after the other. */
async function startEndpoints(
  o: GraphqlServerOptions,
  log: Logger,
  rules: ValidationRule[],
): Promise<Record<string, StartedEndpoint>> {
  const endpoints: Record<string, StartedEndpoint> = {};
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
  return endpoints;
}

/** graphql-ws on the endpoint `o.ws` names, when there is one. */
function attachWs(
  http: Server,
  o: GraphqlServerOptions,
  rules: ValidationRule[],
  log: Logger,
  tracing: Tracing,
): { dispose(): Promise<void> } | undefined {
  const wsEndpoint = o.ws ? o.endpoints[o.ws.path] : undefined;
  if (!o.ws || !wsEndpoint) return undefined;
  return attachGraphqlWs(http, {
    path: o.ws.path,
    schema: wsEndpoint.schema,
    limits: o.limits,
    rules,
    verifier: wsEndpoint.verifier,
    clockSkewS: o.ws.clockSkewS,
    log,
    audit: o.audit ?? noAudit,
    tracing,
  });
}

function closeServer(s: Server): Promise<void> {
  return new Promise((resolve) => {
    s.close(() => resolve());
    s.closeIdleConnections();
    setTimeout(() => s.closeAllConnections(), 5000).unref();
  });
}

/**
 * Connections the kernel holds for this server before it accepts them (Node's default is 511; Linux caps
 * it at net.core.somaxconn). When the queue is full, new connections' SYNs are dropped and each client
 * retries after 1, 3, 7, 15 s: a connect timeout rather than an answer. bench:ledger at 300 writes/s
 * offered (twice the sustained rate): 2,312 listen-queue overflows in one 20 s run with 511, none with
 * 4,096 (`netstat -s`, "times the listen queue of a socket overflowed").
 */
const LISTEN_BACKLOG = 4096;
