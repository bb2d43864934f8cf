import { ErrorCodes, type ErrorCode } from '../domain/errors.ts';

/**
 * A GraphQL-over-HTTP call as a client of Muninn's own API (the MCP bridge and `muninn project` are
 * clients like any other): the caller's bearer token, one named operation, and the API's error codes
 * carried through unchanged. Never logs or returns the token.
 */
export interface GraphQLCall {
  readonly url: string;
  readonly token: string | undefined;
  readonly document: string;
  readonly operationName: string;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly timeoutMs?: number;
}

export interface GraphQLFailure {
  readonly code: ErrorCode;
  readonly message: string;
  /** The error's safe details from `extensions` (e.g. a CONFLICT's `reason`), besides code and retryable. */
  readonly details?: Readonly<Record<string, string | number | boolean | null>>;
}

export type GraphQLOutcome =
  | { readonly ok: true; readonly data: Record<string, unknown> }
  | { readonly ok: false; readonly errors: readonly GraphQLFailure[] };

const DEFAULT_TIMEOUT_MS = 60_000;

export async function callGraphQL(c: GraphQLCall): Promise<GraphQLOutcome> {
  let res: Response;
  try {
    res = await fetch(c.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        ...(c.token ? { authorization: `Bearer ${c.token}` } : {}),
      },
      body: JSON.stringify({ query: c.document, operationName: c.operationName, variables: c.variables }),
      signal: AbortSignal.timeout(c.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    });
  } catch {
    return fail('UNAVAILABLE', 'the Muninn API is unreachable');
  }
  let body: { data?: unknown; errors?: unknown };
  try {
    body = (await res.json()) as typeof body;
  } catch {
    return fail(res.status === 401 ? 'UNAUTHENTICATED' : 'UNAVAILABLE', `the API answered ${res.status}`);
  }
  if (Array.isArray(body.errors) && body.errors.length > 0) {
    return { ok: false, errors: body.errors.map((e) => toFailure(e, res.status)) };
  }
  if (res.status !== 200 || !body.data || typeof body.data !== 'object') {
    return fail(res.status === 401 ? 'UNAUTHENTICATED' : 'UNAVAILABLE', `the API answered ${res.status}`);
  }
  return { ok: true, data: body.data as Record<string, unknown> };
}

const fail = (code: ErrorCode, message: string): GraphQLOutcome => ({
  ok: false,
  errors: [{ code, message }],
});

function toFailure(e: unknown, status: number): GraphQLFailure {
  const o = (e && typeof e === 'object' ? e : {}) as { message?: unknown; extensions?: { code?: unknown } };
  const raw = o.extensions?.code;
  const code: ErrorCode =
    typeof raw === 'string' && (ErrorCodes as readonly string[]).includes(raw)
      ? (raw as ErrorCode)
      : status === 401
        ? 'UNAUTHENTICATED'
        : 'INTERNAL';
  const details: Record<string, string | number | boolean | null> = {};
  for (const [k, v] of Object.entries(o.extensions ?? {}))
    if (
      k !== 'code' &&
      k !== 'retryable' &&
      (v === null || ['string', 'number', 'boolean'].includes(typeof v))
    )
      details[k] = v as string | number | boolean | null;
  return { code, message: typeof o.message === 'string' ? o.message : 'error', details };
}
