// The console is a plain GraphQL client: queries and mutations over HTTP, subscriptions over graphql-ws,
// both with the user's own bearer token. The token lives in sessionStorage (gone when the tab closes);
// the server keeps no session.
import { createClient } from './vendor/graphql-ws/client.js';

const TOKEN_KEY = 'muninn.console.token';
const ENDPOINT = new URL('../graphql', window.location.href);

export class GraphQLError extends Error {
  constructor(message, code) {
    super(message);
    this.code = code ?? 'INTERNAL';
  }
}

export const token = {
  get: () => sessionStorage.getItem(TOKEN_KEY),
  set: (t) => {
    sessionStorage.setItem(TOKEN_KEY, t);
    resetSocket();
  },
  clear: () => {
    sessionStorage.removeItem(TOKEN_KEY);
    resetSocket();
  },
};

/**
 * What the token says about its holder, for display only (the server verifies every request).
 * @returns {{ sub: string, tenant: string, scopes: string[], exp: number | undefined } | null}
 */
export function claims() {
  const t = token.get();
  if (!t) return null;
  try {
    const part = t.split('.')[1] ?? '';
    const json = JSON.parse(atob(part.replace(/-/g, '+').replace(/_/g, '/')));
    const scopes = String(json.scope ?? json.scp ?? '')
      .split(/[\s,]+/)
      .filter(Boolean);
    return { sub: String(json.sub ?? '?'), tenant: String(json.tenant ?? '?'), scopes, exp: json.exp };
  } catch {
    return { sub: '?', tenant: '?', scopes: [], exp: undefined };
  }
}

function firstError(errors) {
  const e = errors[0] ?? {};
  return new GraphQLError(e.message ?? 'request failed', e.extensions?.code);
}

/** One GraphQL operation over HTTP; resolves to `data`, rejects with a GraphQLError (message + code). */
export async function gql(query, variables = {}) {
  const t = token.get();
  if (!t) throw new GraphQLError('paste a token first', 'UNAUTHENTICATED');
  const res = await fetch(ENDPOINT, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${t}` },
    body: JSON.stringify({ query, variables }),
  });
  let body;
  try {
    body = await res.json();
  } catch {
    throw new GraphQLError(`HTTP ${res.status}`, res.status === 401 ? 'UNAUTHENTICATED' : 'INTERNAL');
  }
  if (body.errors?.length) throw firstError(body.errors);
  return body.data;
}

let socket = null;
function client() {
  if (!socket) {
    const url = new URL(ENDPOINT);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    socket = createClient({
      url: url.href,
      connectionParams: () => ({ authorization: `Bearer ${token.get() ?? ''}` }),
      retryAttempts: 3,
      lazyCloseTimeout: 1000,
    });
  }
  return socket;
}

function resetSocket() {
  const s = socket;
  socket = null;
  s?.dispose();
}

/**
 * A live subscription. `onData` gets each `data`; `onError` a GraphQLError. Returns the unsubscribe
 * function.
 */
export function subscribe(query, variables, onData, onError) {
  return client().subscribe(
    { query, variables },
    {
      next: (msg) => (msg.errors?.length ? onError(firstError(msg.errors)) : onData(msg.data)),
      error: (e) =>
        onError(
          Array.isArray(e)
            ? firstError(e)
            : new GraphQLError(
                e instanceof Error ? e.message : 'the live connection closed (is the token valid?)',
                'UNAVAILABLE',
              ),
        ),
      complete: () => undefined,
    },
  );
}
