/**
 * Embeddings from an OpenAI-compatible HTTP API (`POST …/v1/embeddings`): OpenAI, Azure-style gateways,
 * vLLM, Ollama, LiteLLM, text-embeddings-inference…
 *
 * `baseUrl` may name the API root with or without the version segment: `https://api.openai.com/v1` and
 * `https://api.openai.com` both post to `https://api.openai.com/v1/embeddings`.
 *
 * Errors (src/domain/errors.ts): network failure, timeout, 5xx → UNAVAILABLE (retryable); 429 →
 * RATE_LIMITED; any other non-2xx or a reply that is not a well-formed embeddings response → INTERNAL.
 * The API key is sent only in the Authorization header; it is never logged and is scrubbed from every
 * error message and detail (including text echoed back by the server).
 *
 * Texts that are empty after trimming are not sent (the OpenAI API rejects them); they get the all-zero
 * vector, which the Embedder port allows for text with nothing to embed.
 */
import { type Embedder, l2normalize } from '../../ports/embedder.ts';
import { MuninnError, unavailable } from '../../domain/errors.ts';

export interface OpenAIEmbedderOptions {
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** Length of the vectors the server returns; a reply of any other length is an error. */
  dimensions: number;
  /** Send `dimensions` in the request (text-embedding-3-* can shorten vectors; many servers reject it). */
  sendDimensions?: boolean;
  /** Per request; default 30 s. */
  timeoutMs?: number;
  /** Texts per request; default 128. */
  batchSize?: number;
}

const MAX_SNIPPET = 200;

function endpoint(baseUrl: string): string {
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    throw new MuninnError('INTERNAL', 'embedding API baseUrl is not a URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new MuninnError('INTERNAL', 'embedding API baseUrl must be http(s)');
  }
  const path = u.pathname.replace(/\/+$/, '');
  u.pathname = /\/v\d+$/.test(path) ? `${path}/embeddings` : `${path}/v1/embeddings`;
  u.search = '';
  u.hash = '';
  return u.toString();
}

export function createOpenAIEmbedder(opts: OpenAIEmbedderOptions): Embedder {
  const { model, dimensions, apiKey } = opts;
  if (!Number.isInteger(dimensions) || dimensions < 1)
    throw new RangeError('dimensions must be a positive integer');
  if (!model) throw new RangeError('model is required');
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const batchSize = opts.batchSize ?? 128;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new RangeError('batchSize must be a positive integer');
  const url = endpoint(opts.baseUrl);
  const api: Api = {
    url,
    where: new URL(url).host,
    model,
    dimensions,
    apiKey,
    sendDimensions: opts.sendDimensions,
    timeoutMs,
  };

  return {
    modelId: `openai:${model}#${dimensions}`,
    dimensions,
    async embed(texts: readonly string[]): Promise<Float32Array[]> {
      const out: Float32Array[] = texts.map(() => new Float32Array(dimensions));
      const todo = texts.flatMap((t, i) => (t.trim() === '' ? [] : [i]));
      for (let s = 0; s < todo.length; s += batchSize) {
        const idx = todo.slice(s, s + batchSize);
        const vectors = await request(
          api,
          idx.map((i) => texts[i]!),
        );
        idx.forEach((i, k) => (out[i] = vectors[k]!));
      }
      return out;
    },
  };
}

/** The endpoint and what every request to it sends and expects. */
interface Api {
  readonly url: string;
  /** The endpoint's host: what error messages name. */
  readonly where: string;
  readonly model: string;
  readonly dimensions: number;
  readonly apiKey: string | undefined;
  readonly sendDimensions: boolean | undefined;
  readonly timeoutMs: number;
}

/** Removes the key (and a Bearer header that carries it) from any text headed for an error. */
function scrub(api: Api, s: string): string {
  let out = s;
  if (api.apiKey) out = out.split(api.apiKey).join('[redacted]');
  return out.replace(/Bearer\s+\S+/gi, 'Bearer [redacted]');
}

function snippet(api: Api, s: string): string {
  return scrub(api, s.length > MAX_SNIPPET ? `${s.slice(0, MAX_SNIPPET)}…` : s);
}

function malformed(api: Api, why: string): MuninnError {
  return new MuninnError('INTERNAL', `embedding API at ${api.where} returned a malformed reply: ${why}`, {
    model: api.model,
  });
}

async function request(api: Api, texts: readonly string[]): Promise<Float32Array[]> {
  return parseEmbeddings(api, await post(api, texts), texts.length);
}

/** Posts one batch and returns the reply's text when its status is a success. */
async function post(api: Api, texts: readonly string[]): Promise<string> {
  const { where, model, apiKey, timeoutMs } = api;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
  };
  if (apiKey) headers['authorization'] = `Bearer ${apiKey}`;
  const body: Record<string, unknown> = { model, input: texts, encoding_format: 'float' };
  if (api.sendDimensions) body['dimensions'] = api.dimensions;

  let res: Response;
  try {
    res = await fetch(api.url, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    const timedOut = e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError');
    const reason = timedOut ? `timed out after ${timeoutMs} ms` : 'is unreachable';
    // The cause carries the network error only (no request headers), scrubbed all the same.
    const cause = e instanceof Error ? new Error(snippet(api, `${e.name}: ${e.message}`)) : undefined;
    throw unavailable(`embedding API at ${where} ${reason}`, cause);
  }

  let text: string;
  try {
    text = await res.text();
  } catch (e) {
    const cause = e instanceof Error ? new Error(snippet(api, e.message)) : undefined;
    throw unavailable(`embedding API at ${where} broke off its reply`, cause);
  }
  if (res.status >= 500) throw unavailable(`embedding API at ${where} answered ${res.status}`);
  if (res.status === 429) {
    throw new MuninnError('RATE_LIMITED', `embedding API at ${where} is rate limiting (429)`, { model });
  }
  if (res.status < 200 || res.status > 299) {
    throw new MuninnError('INTERNAL', `embedding API at ${where} rejected the request (${res.status})`, {
      model,
      status: res.status,
      reply: snippet(api, text),
    });
  }
  return text;
}

/** One L2-normalised vector per input, in input order, from a reply that must hold exactly those. */
function parseEmbeddings(api: Api, text: string, inputs: number): Float32Array[] {
  const { dimensions } = api;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw malformed(api, 'not JSON');
  }
  const data = (json as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw malformed(api, 'no data array');
  if (data.length !== inputs) throw malformed(api, `${data.length} embeddings for ${inputs} inputs`);
  const out = new Array<Float32Array | undefined>(inputs);
  data.forEach((item: unknown, pos) => {
    const it = item as { embedding?: unknown; index?: unknown } | null;
    const index = it?.index ?? pos;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= inputs) {
      throw malformed(api, 'bad index');
    }
    if (out[index]) throw malformed(api, `duplicate index ${index}`);
    const emb = it?.embedding;
    if (!Array.isArray(emb)) throw malformed(api, 'embedding is not an array of numbers');
    if (emb.length !== dimensions) {
      throw malformed(api, `embedding has ${emb.length} dimensions, configured ${dimensions}`);
    }
    const v = new Float32Array(dimensions);
    for (let k = 0; k < dimensions; k++) {
      const x: unknown = emb[k];
      if (typeof x !== 'number' || !Number.isFinite(x)) throw malformed(api, 'embedding holds a non-number');
      v[k] = x;
    }
    out[index] = l2normalize(v);
  });
  return out.map((v) => {
    if (!v) throw malformed(api, 'missing index');
    return v;
  });
}
