import type { IncomingMessage, Server } from 'node:http';
import {
  execute,
  GraphQLError,
  Kind,
  specifiedRules,
  validate,
  type ExecutionArgs,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type ValidationRule,
} from 'graphql';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Context } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import type { Logger } from '../ports/logger.ts';
import type { Principal } from '../domain/principal.ts';
import type { TokenVerifier } from '../ports/token-verifier.ts';
import { authenticate, type ApiContext } from './context.ts';
import { auditOperation } from './audit-plugin.ts';
import type { AuditLog } from '../ports/audit.ts';
import { noTracing, type Tracing } from '../ports/tracing.ts';
import { formatGraphQLError, gqlError } from './errors.ts';
import { checkCost, parseWithLimits, type QueryLimits } from './limits.ts';

/**
 * GraphQL over WebSocket (graphql-ws) on the HTTP server's `path`, with the HTTP path's rules:
 *
 *  - Authentication: the bearer token from `connection_init` (`authorization`) or the upgrade request's
 *    header; a refused token closes with 4403 (graphql-ws "Forbidden").
 *  - Token lifetime: a connection lives no longer than its token. At `exp` (+ the configured clock skew,
 *    the instant HTTP would refuse the same token) the socket is closed with TOKEN_EXPIRED_CLOSE, and
 *    every operation started on the socket checks the deadline again (timers can run late).
 *  - Limits: tokens, depth, aliases, cost (with the request's variables), and at most
 *    `maxWsSubscriptions` operations in flight per socket (RATE_LIMITED beyond that).
 *  - Errors: the same formatter as HTTP (stable `extensions.code`, `retryable`, internals masked).
 */
export interface WsOptions {
  readonly path: string;
  readonly schema: GraphQLSchema;
  readonly limits: QueryLimits & { readonly maxBodyBytes: number; readonly maxWsSubscriptions: number };
  readonly rules: readonly ValidationRule[];
  readonly verifier: TokenVerifier;
  readonly clockSkewS: number;
  readonly log: Logger;
  /** Each delivery (a query's result, a subscription's event) leaves one audit entry. */
  readonly audit: AuditLog;
  /** A server span per query or mutation (not per subscription: a stream has no one request to trace). */
  readonly tracing?: Tracing;
}

/** Close code when a connection's token expires: graphql-ws's 4401 "Unauthorized". Reconnect with a new token. */
export const TOKEN_EXPIRED_CLOSE = 4401;
/** setTimeout's largest delay (~24.8 days); longer waits re-arm. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Connection {
  principal: Principal;
  /** Epoch ms after which the token is no longer accepted. */
  deadlineMs: number;
  timer: NodeJS.Timeout | undefined;
}
type Extra = { socket: WebSocket; request: IncomingMessage; connection?: Connection };
type Ctx = Context<Record<string, unknown> | undefined, Extra>;

export function attachGraphqlWs(http: Server, o: WsOptions): { dispose(): Promise<void> } {
  const format = formatGraphQLError(o.log);
  const wss = new WebSocketServer({ noServer: true, maxPayload: o.limits.maxBodyBytes });
  routeUpgrades(http, wss, o.path);
  const server = useServer<Record<string, unknown> | undefined, Extra>(
    {
      schema: o.schema,
      // Never put a raw error message into a close reason.
      isProd: true,
      onConnect: async (ctx) => {
        const c = await connectionOf(ctx, o);
        // A socket that closed while its token was being verified needs no timer.
        if (!c || ctx.extra.socket.readyState !== ctx.extra.socket.OPEN) return false;
        ctx.extra.connection = c;
        arm(ctx, c, o.log);
        return true;
      },
      onClose: (ctx) => clearTimeout(ctx.extra.connection?.timer),
      onSubscribe: (ctx, id, payload) => admit(ctx, id, payload, o),
      execute: (args) =>
        (o.tracing ?? noTracing).inSpan(
          `WS ${o.path}`,
          { kind: 'server', attributes: { 'url.path': o.path } },
          async () => execute(args),
        ),
      onError: (_ctx, _id, _payload, errors) => errors.map(format),
      onNext: (ctx, _id, _payload, args, result) => {
        const formatted = result.errors?.length
          ? { ...result, errors: result.errors.map(format) }
          : undefined;
        const principal = ctx.extra.connection?.principal;
        if (principal) auditOperation(o.audit, o.log, principal, resolvedOf(args), formatted ?? result);
        return formatted;
      },
    },
    wss,
  );
  return {
    dispose: async () => {
      await server.dispose();
      await new Promise<void>((r) => wss.close(() => r()));
    },
  };
}

/** Upgrade requests for `path` go to `wss`; any other path's socket is destroyed. */
function routeUpgrades(http: Server, wss: WebSocketServer, path: string): void {
  http.on('upgrade', (req, socket, head) => {
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== path) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
}

function expire(ctx: Ctx, log: Logger): void {
  log.info({ event: 'ws_token_expired', remote: ctx.extra.request.socket.remoteAddress }, 'token expired');
  ctx.extra.socket.close(TOKEN_EXPIRED_CLOSE, 'token expired');
}

/** Closes the socket at the connection's deadline (re-arming while it is beyond one timer's reach). */
function arm(ctx: Ctx, c: Connection, log: Logger): void {
  c.timer = setTimeout(
    () => (Date.now() >= c.deadlineMs ? expire(ctx, log) : arm(ctx, c, log)),
    Math.min(Math.max(0, c.deadlineMs - Date.now()), MAX_TIMER_MS),
  ).unref();
}

function resolvedOf(args: ExecutionArgs) {
  const operation = args.document.definitions.find(
    (d): d is OperationDefinitionNode =>
      d.kind === Kind.OPERATION_DEFINITION && (!args.operationName || d.name?.value === args.operationName),
  );
  return operation ? { schema: args.schema, operation, variables: args.variableValues ?? {} } : undefined;
}

/** The token from `connection_init` (or the upgrade request's header) → the connection, or undefined. */
async function connectionOf(ctx: Ctx, o: WsOptions): Promise<Connection | undefined> {
  const fromParams = ctx.connectionParams?.['authorization'] ?? ctx.connectionParams?.['Authorization'];
  const header = typeof fromParams === 'string' ? fromParams : ctx.extra.request.headers.authorization;
  let principal: Principal;
  try {
    principal = await authenticate(o.verifier, header, {
      log: o.log,
      transport: 'ws',
      remote: ctx.extra.request.socket.remoteAddress,
    });
  } catch {
    return undefined;
  }
  // The verifier requires exp; a principal without one never gets a socket (fail closed).
  if (principal.expiresAt === undefined) return undefined;
  return { principal, deadlineMs: (principal.expiresAt + o.clockSkewS) * 1000, timer: undefined };
}

/**
 * Checks one operation before it runs: token deadline, the socket's operation cap, then the HTTP path's
 * limits. Returns the execution arguments, or the errors to answer with (formatted by `onError`).
 */
function admit(
  ctx: Ctx,
  id: string,
  payload: { query: string; variables?: Record<string, unknown> | null; operationName?: string | null },
  o: WsOptions,
): ExecutionArgs | readonly GraphQLError[] {
  const c = ctx.extra.connection;
  if (!c || Date.now() >= c.deadlineMs) {
    // Answer first, then close: the error tells the client why its operation did not run.
    setImmediate(() => expire(ctx, o.log));
    return [gqlError('UNAUTHENTICATED', 'token expired')];
  }
  // graphql-ws has already registered this operation's id, so the count includes it.
  const running = Object.keys(ctx.subscriptions).length;
  if (running > o.limits.maxWsSubscriptions) {
    const max = o.limits.maxWsSubscriptions;
    return [
      new GraphQLError(`at most ${max} operations may run at once on one WebSocket (operation ${id})`, {
        extensions: { code: 'RATE_LIMITED', limit: 'subscriptions', max },
      }),
    ];
  }
  let document;
  try {
    document = parseWithLimits(payload.query, o.limits);
  } catch (e) {
    return [e instanceof GraphQLError ? e : gqlError('BAD_USER_INPUT', 'invalid query')];
  }
  const errors = validate(o.schema, document, [...specifiedRules, ...o.rules]);
  if (errors.length)
    return errors.map(
      (e) =>
        new GraphQLError(e.message, {
          nodes: e.nodes,
          extensions: { code: 'BAD_USER_INPUT', ...e.extensions },
        }),
    );
  const cost = checkCost(
    o.schema,
    document,
    payload.variables ?? undefined,
    payload.operationName ?? undefined,
    o.limits.maxCost,
  );
  if (cost) return [cost];
  return {
    schema: o.schema,
    document,
    variableValues: payload.variables,
    operationName: payload.operationName,
    contextValue: { principal: c.principal } satisfies ApiContext,
  };
}
