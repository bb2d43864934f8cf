import type { GraphQLFormattedError } from 'graphql';
import { GraphQLError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { ErrorCodes, isMuninnError, type ErrorCode } from '../domain/errors.ts';
import { redactSecrets } from '../ingest/screen.ts';
import type { Logger } from '../ports/logger.ts';

/** Codes that graphql-js/Apollo produce for a malformed request: all are the caller's fault. */
const REQUEST_ERRORS = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
]);

/**
 * The wire shape of every error: a stable `extensions.code` from the one error enum, a `retryable` flag,
 * the safe details of a MuninnError, and nothing else. Unknown errors are masked as INTERNAL and
 * logged with an id the caller can quote.
 */
export function formatError(logger: Logger) {
  const shape = (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = unwrapResolverError(error);
    const base = { message: formatted.message, locations: formatted.locations, path: formatted.path };
    if (isMuninnError(original)) {
      if (original.code === 'INTERNAL' || original.code === 'UNAVAILABLE') {
        logger.error({ code: original.code, err: describe(original) }, redactSecrets(original.message));
      }
      return {
        ...base,
        message: original.message,
        extensions: { ...original.details, code: original.code, retryable: original.retryable },
      };
    }
    const code = formatted.extensions?.['code'];
    if (typeof code === 'string' && (ErrorCodes as readonly string[]).includes(code)) {
      const { http: _http, stacktrace: _s, ...rest } = formatted.extensions ?? {};
      return {
        ...base,
        extensions: { ...rest, code, retryable: code === 'RATE_LIMITED' || code === 'UNAVAILABLE' },
      };
    }
    if (typeof code === 'string' && REQUEST_ERRORS.has(code)) {
      // Apollo re-codes validation errors; keep the limit facts our rules attached, nothing else.
      const { limit, max, actual } = formatted.extensions ?? {};
      const limits = limit === undefined ? {} : { limit, max, ...(actual === undefined ? {} : { actual }) };
      return {
        ...base,
        extensions: { ...limits, code: 'BAD_USER_INPUT' satisfies ErrorCode, retryable: false },
      };
    }
    const errorId = crypto.randomUUID();
    logger.error({ errorId, err: describe(original) }, 'internal error');
    return {
      message: `internal error (${errorId})`,
      path: formatted.path,
      extensions: { code: 'INTERNAL', retryable: false, errorId },
    };
  };
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError =>
    withoutSecrets(shape(formatted, error));
}

/**
 * `formatError` for errors that never pass through Apollo (the graphql-ws path): the same wire shape and
 * masking. An error raised before execution (parse, validation, variable coercion: no path, and caused
 * by nothing but GraphQL itself) is the caller's fault when it has no code of its own (BAD_USER_INPUT,
 * as Apollo treats it); anything caused by a thrown Error is judged by that error, so an unexpected
 * failure is INTERNAL and masked wherever it surfaced.
 */
export function formatGraphQLError(logger: Logger) {
  const format = formatError(logger);
  return (e: GraphQLError): GraphQLFormattedError => {
    const formatted = e.toJSON();
    const cause = e.originalError;
    // A MuninnError raised outside a field (a subscription's source stream) keeps its code too.
    const error = cause && isMuninnError(cause) ? cause : e;
    const requestError = !e.path && (!cause || cause instanceof GraphQLError);
    if (!requestError || typeof formatted.extensions?.['code'] === 'string') return format(formatted, error);
    const code: ErrorCode = 'BAD_USER_INPUT';
    return format({ ...formatted, extensions: { ...formatted.extensions, code } }, error);
  };
}

/**
 * `redactSecrets`, remembering the strings it found clean (extension keys, codes, the overload guard's
 * messages: what errors repeat most). Why: each call runs every secret rule (~8 µs even on "code"), ~78 µs
 * an error for a refusal's dozen strings, refused by the hundred a second under overload. Only clean
 * strings are kept, so no secret outlives its error here; a string holding one is redacted afresh each
 * time. Bounded: emptied when it reaches CLEAN_MAX strings.
 */
const CLEAN_MAX = 1024;
const cleanStrings = new Set<string>();
function redacted(s: string): string {
  if (cleanStrings.has(s)) return s;
  const out = redactSecrets(s);
  if (out === s) {
    if (cleanStrings.size >= CLEAN_MAX) cleanStrings.clear();
    cleanStrings.add(s);
  }
  return out;
}

/**
 * The last guard: no error message or detail carries a credential back. Commands refuse secrets in
 * identifiers without naming them, but graphql-js echoes an invalid variable's value ("got invalid value
 * …") and a zod path can hold a JSON key; both are redacted here like everything else.
 */
function withoutSecrets(e: GraphQLFormattedError): GraphQLFormattedError {
  const clean = (v: unknown): unknown =>
    typeof v === 'string'
      ? redacted(v)
      : Array.isArray(v)
        ? v.map(clean)
        : v && typeof v === 'object'
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [redacted(k), clean(x)]))
          : v;
  return {
    ...e,
    message: redacted(e.message),
    ...(e.extensions ? { extensions: clean(e.extensions) as Record<string, unknown> } : {}),
  };
}

/** What the log says about an error: its chain of messages, any credential in them redacted. */
function describe(e: unknown): string {
  if (e instanceof Error)
    return redactSecrets(`${e.name}: ${e.message}${e.cause ? ` (cause: ${describe(e.cause)})` : ''}`);
  return redactSecrets(String(e));
}

export const gqlError = (code: ErrorCode, message: string, status?: number): GraphQLError =>
  new GraphQLError(message, { extensions: { code, ...(status ? { http: { status } } : {}) } });
