import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * CORS for browser dashboards (and browser MCP clients): only the configured origins (MUNINN_CORS_ORIGINS)
 * may read responses, none by default. Credentials are bearer tokens in the Authorization header, never
 * cookies, so Access-Control-Allow-Credentials is never sent.
 */
export interface CorsPolicy {
  readonly origins: readonly string[];
  readonly methods: readonly string[];
  readonly allowHeaders: readonly string[];
  readonly exposeHeaders: readonly string[];
}

export type CorsVerdict =
  /** No Origin header (not a browser), or an allowed one: go on (allowed: the headers are set). */
  | 'continue'
  /** A preflight, answered (204 allowed, 403 refused). */
  | 'answered'
  /** A browser request from an origin not allowed; the caller decides (GraphQL: serve without CORS headers). */
  | 'foreign';

const PREFLIGHT_MAX_AGE_S = '600';

export function applyCors(req: IncomingMessage, res: ServerResponse, p: CorsPolicy): CorsVerdict {
  const origin = req.headers.origin;
  const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
  if (origin === undefined) return preflight ? answer(res, 403) : 'continue';
  res.setHeader('vary', 'Origin');
  if (!p.origins.includes(origin)) return preflight ? answer(res, 403) : 'foreign';
  res.setHeader('access-control-allow-origin', origin);
  if (p.exposeHeaders.length) res.setHeader('access-control-expose-headers', p.exposeHeaders.join(', '));
  if (!preflight) return 'continue';
  const method = String(req.headers['access-control-request-method']).toUpperCase();
  if (!p.methods.includes(method)) return answer(res, 403);
  res.setHeader('access-control-allow-methods', p.methods.join(', '));
  res.setHeader('access-control-allow-headers', p.allowHeaders.join(', '));
  res.setHeader('access-control-max-age', PREFLIGHT_MAX_AGE_S);
  return answer(res, 204);
}

function answer(res: ServerResponse, status: number): 'answered' {
  if (status !== 204) res.removeHeader('access-control-allow-origin');
  res.writeHead(status, { 'content-length': '0' });
  res.end();
  return 'answered';
}

/** The policy of /graphql: Apollo's CSRF-prevention header is allowed so a dashboard can send GET queries. */
export const graphqlCors = (origins: readonly string[]): CorsPolicy => ({
  origins,
  methods: ['GET', 'POST'],
  allowHeaders: ['authorization', 'content-type', 'apollo-require-preflight', 'x-apollo-operation-name'],
  exposeHeaders: [],
});
