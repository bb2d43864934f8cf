/**
 * SessionSource over the documented Hermes-style session API (shape: session-schema.ts), on an internal
 * network only. `GET {baseUrl}/sessions` → { sessions: [...] }, `GET {baseUrl}/sessions/{id}` → session.
 * Bounded: per-request timeout, response-size cap, no redirects (a redirect is an error, never followed),
 * JSON content only. The bearer token comes from runtime config and is never logged or echoed in errors.
 */
import type { SessionSource, SessionSummary } from './ports.ts';
import { SessionListSchema } from './session-schema.ts';

export interface HttpSourceConfig {
  baseUrl: string;
  token?: string;
  timeoutMs?: number;
  maxBytes?: number;
  fetch?: typeof fetch;
}

export class SessionApiError extends Error {
  constructor(public readonly code: 'HTTP_STATUS' | 'TOO_LARGE' | 'NOT_JSON' | 'BAD_LISTING' | 'NETWORK') {
    super(`session API: ${code}`);
    this.name = 'SessionApiError';
  }
}

/** The resolved request settings one source's reads share. */
interface Endpoint {
  readonly base: URL;
  readonly token: string | undefined;
  readonly doFetch: typeof fetch;
  readonly timeoutMs: number;
  readonly maxBytes: number;
}

export function httpSessionSource(cfg: HttpSourceConfig): SessionSource {
  const base = new URL(cfg.baseUrl.endsWith('/') ? cfg.baseUrl : `${cfg.baseUrl}/`);
  if (base.username || base.password) throw new Error('session API base URL must not carry credentials');
  const api: Endpoint = {
    base,
    token: cfg.token,
    doFetch: cfg.fetch ?? fetch,
    timeoutMs: cfg.timeoutMs ?? 10_000,
    maxBytes: cfg.maxBytes ?? 8 * 1024 * 1024,
  };

  return {
    async listSessions(): Promise<SessionSummary[]> {
      const parsed = SessionListSchema.safeParse(await getJson(api, 'sessions'));
      if (!parsed.success) throw new SessionApiError('BAD_LISTING');
      return parsed.data.sessions.map((s) => ({
        id: s.id,
        source: s.source,
        owner: s.owner,
        updatedAt: s.updated_at,
        revision: s.revision,
      }));
    },
    async getSession(id: string): Promise<unknown> {
      return getJson(api, `sessions/${encodeURIComponent(id)}`);
    },
  };
}

async function getJson(api: Endpoint, path: string): Promise<unknown> {
  let res: Response;
  try {
    res = await api.doFetch(new URL(path, api.base), {
      headers: {
        accept: 'application/json',
        ...(api.token ? { authorization: `Bearer ${api.token}` } : {}),
      },
      redirect: 'error',
      signal: AbortSignal.timeout(api.timeoutMs),
    });
  } catch {
    throw new SessionApiError('NETWORK');
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    throw new SessionApiError('HTTP_STATUS');
  }
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > api.maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw new SessionApiError('TOO_LARGE');
  }
  const body = await readCapped(res, api.maxBytes);
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw new SessionApiError('NOT_JSON');
  }
}

/** The response body, refused (the stream cancelled) once it passes `maxBytes`. */
async function readCapped(res: Response, maxBytes: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (res.body) {
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw new SessionApiError('TOO_LARGE');
      }
      chunks.push(value);
    }
  }
  return Buffer.concat(chunks);
}
