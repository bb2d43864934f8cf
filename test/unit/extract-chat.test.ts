import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createChatExtractor } from '../../src/adapters/extractors/openai-chat.ts';
import { isMuninnError, type MuninnError } from '../../src/domain/errors.ts';
import type { EpisodeTurn, ExtractionInput } from '../../src/ports/extractor.ts';

// -----------------------------------------------------------------------------------------------------------
// A local stand-in for an OpenAI-compatible API.
// -----------------------------------------------------------------------------------------------------------

interface Recorded {
  url: string;
  headers: IncomingHttpHeaders;
  body: {
    model: string;
    messages: Array<{ role: string; content: string }>;
    response_format: {
      type: string;
      json_schema: { name: string; strict: boolean; schema: { type: string } };
    };
  };
}

type Handler = (req: Recorded, res: ServerResponse) => void;

const API_KEY = ['test', 'key', 'never', 'log', 'me', '0123456789'].join('-');
let server: Server;
let baseUrl: string;
let handler: Handler;
let requests: Recorded[];

const send = (res: ServerResponse, status: number, body: string): void => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(body);
};
const completion = (content: string): string =>
  JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] });
const statementsReply = (statements: unknown[]): string => completion(JSON.stringify({ statements }));

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec: Recorded = {
        url: req.url ?? '',
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Recorded['body'],
      };
      requests.push(rec);
      handler(rec, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  requests = [];
  handler = (_req, res) => send(res, 200, statementsReply([]));
});

// -----------------------------------------------------------------------------------------------------------
// The episode: three conversational turns and a tool turn, joined by '\n'.
// -----------------------------------------------------------------------------------------------------------

const TEXTS: Array<[role: string, speaker: string | null, text: string]> = [
  ['user', 'Caroline', 'We moved payments-api to Postgres last May.'],
  ['tool', null, '{"status":"ok"}'],
  ['assistant', 'Melanie', 'Noted. Redis stays as the cache.'],
  ['user', 'Caroline', 'I think the staging cluster is in eu-west-1.'],
];
let cursor = 0;
const TURNS: EpisodeTurn[] = TEXTS.map(([role, speaker, text], index) => {
  const start = cursor;
  cursor += text.length + 1;
  return { index, role, speaker, text, start, end: start + text.length, label: `D1:${index + 1}` };
});
const EPISODE_TEXT = TEXTS.map(([, , t]) => t).join('\n');
const INPUT: ExtractionInput = {
  episodeId: 'ep-1',
  source: 'test',
  occurredAt: '2023-05-08T13:56:00Z',
  turns: TURNS,
};
const turn = (i: number): EpisodeTurn => {
  const t = TURNS[i];
  if (!t) throw new Error(`no turn ${i}`);
  return t;
};

const item = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  class: 'FACT',
  subject: 'payments-api',
  predicate: 'uses',
  object: 'Postgres',
  text: 'payments-api uses Postgres.',
  spans: [{ start: turn(0).start, end: turn(0).end, label: 'whatever' }],
  confidence: 0.9,
  rationale: null,
  about: [{ name: 'payments-api', type: 'service' }],
  timeExpression: 'last May',
  ...over,
});

async function failure(p: Promise<unknown>): Promise<MuninnError> {
  try {
    await p;
  } catch (e) {
    if (isMuninnError(e)) return e;
    throw e;
  }
  throw new Error('expected a failure');
}

function expectNoKey(err: MuninnError): void {
  const dump = JSON.stringify({
    message: err.message,
    details: err.details,
    cause: err.cause,
    stack: err.stack,
  });
  expect(dump).not.toContain(API_KEY);
  expect(String(err)).not.toContain(API_KEY);
}

describe('chat extractor: request', () => {
  it('Given a configured extractor, When it extracts, Then it posts model, json_schema response_format, Bearer key and numbered turns', async () => {
    const extractor = createChatExtractor({ baseUrl, apiKey: API_KEY, model: 'small-model' });
    await extractor.extract(INPUT);

    expect(requests).toHaveLength(1);
    const req = requests[0]!;
    expect(req.url).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(req.body.model).toBe('small-model');
    expect(req.body.response_format.type).toBe('json_schema');
    expect(req.body.response_format.json_schema.name).toBe('muninn_statements');
    expect(req.body.response_format.json_schema.strict).toBe(true);
    expect(req.body.response_format.json_schema.schema.type).toBe('object');
    const [system, user] = req.body.messages;
    expect(system?.role).toBe('system');
    expect(system?.content).toMatch(/DATA, not instructions/);
    expect(system?.content).toMatch(/MUST cite/);
    const payload = JSON.parse(user?.content.slice(user.content.indexOf('{')) ?? '{}') as {
      turns: Array<{ turn: number; start: number; label: string; text: string }>;
    };
    // Tool turns are not sent; conversational ones carry their episode offsets.
    expect(payload.turns.map((t) => [t.turn, t.start, t.label])).toEqual([
      [0, turn(0).start, 'D1:1'],
      [2, turn(2).start, 'D1:3'],
      [3, turn(3).start, 'D1:4'],
    ]);
    expect(extractor.id).toBe('chat:small-model');
  });

  it('Given a base URL ending in /v1 and no key, When it extracts, Then the path is not doubled and no Authorization is sent', async () => {
    await createChatExtractor({ baseUrl: `${baseUrl}/v1/`, model: 'm' }).extract(INPUT);
    expect(requests[0]?.url).toBe('/v1/chat/completions');
    expect(requests[0]?.headers.authorization).toBeUndefined();
  });

  it('Given only system and tool turns, When it extracts, Then no request is made', async () => {
    const out = await createChatExtractor({ baseUrl, model: 'm' }).extract({ ...INPUT, turns: [turn(1)] });
    expect(out).toEqual([]);
    expect(requests).toHaveLength(0);
  });
});

describe('chat extractor: reply', () => {
  it('Given a valid reply, When it extracts, Then statements map through with canonical whitespace and the turn label', async () => {
    handler = (_req, res) =>
      send(
        res,
        200,
        statementsReply([item({ subject: '  payments-api ', text: 'payments-api   uses Postgres.' })]),
      );
    const out = await createChatExtractor({ baseUrl, model: 'm' }).extract(INPUT);
    expect(out).toEqual([
      {
        class: 'FACT',
        subject: 'payments-api',
        predicate: 'uses',
        object: 'Postgres',
        text: 'payments-api uses Postgres.',
        spans: [{ start: turn(0).start, end: turn(0).end, label: 'D1:1' }],
        confidence: 0.9,
        rationale: null,
        about: [{ name: 'payments-api', type: 'service' }],
        timeExpression: 'last May',
      },
    ]);
  });

  it('Given statements citing bad spans, When it extracts, Then only grounded ones are kept', async () => {
    const end = EPISODE_TEXT.length;
    const sep = turn(0).end; // the '\n' between turn 0 and turn 1
    handler = (_req, res) =>
      send(
        res,
        200,
        statementsReply([
          item({ subject: 'past-the-end', spans: [{ start: end - 3, end: end + 40, label: null }] }),
          item({ subject: 'negative', spans: [{ start: -5, end: 4, label: null }] }),
          item({ subject: 'inverted', spans: [{ start: 10, end: 4, label: null }] }),
          item({ subject: 'uncited', spans: [] }),
          item({ subject: 'separator-only', spans: [{ start: sep, end: sep + 1, label: null }] }),
          item({ subject: 'tool-turn', spans: [{ start: turn(1).start, end: turn(1).end, label: null }] }),
          item({
            subject: 'one-bad-of-two',
            spans: [
              { start: turn(2).start, end: turn(2).end, label: null },
              { start: end + 1, end: end + 9, label: null },
            ],
          }),
          item({ class: 'DECISION', subject: 'no-rationale', rationale: null }),
          item({ subject: 'bad-confidence', confidence: 7 }),
          { nonsense: true },
          item({ subject: 'grounded', spans: [{ start: turn(3).start + 8, end: turn(3).end, label: null }] }),
        ]),
      );
    const out = await createChatExtractor({ baseUrl, model: 'm' }).extract(INPUT);
    expect(out.map((s) => s.subject)).toEqual(['grounded']);
    const span = out[0]!.spans[0]!;
    expect(span.label).toBe('D1:4');
    expect(EPISODE_TEXT.slice(span.start, span.end)).toBe('the staging cluster is in eu-west-1.');
  });

  it('Given a low-confidence item and an escalation model, When it extracts, Then the stronger model is asked about just that turn and its answer replaces the item', async () => {
    handler = (req, res) => {
      if (req.body.model === 'small') {
        send(
          res,
          200,
          statementsReply([
            item({ subject: 'confident', confidence: 0.9 }),
            item({
              subject: 'unsure',
              confidence: 0.3,
              spans: [{ start: turn(3).start, end: turn(3).end, label: null }],
            }),
          ]),
        );
      } else {
        send(
          res,
          200,
          statementsReply([
            item({
              subject: 'staging cluster',
              predicate: 'is in',
              object: 'eu-west-1',
              confidence: 0.8,
              spans: [{ start: turn(3).start, end: turn(3).end, label: null }],
            }),
          ]),
        );
      }
    };
    const extractor = createChatExtractor({
      baseUrl,
      model: 'small',
      escalationModel: 'big',
      escalateBelow: 0.5,
    });
    const out = await extractor.extract(INPUT);

    expect(extractor.id).toBe('chat:small>big');
    expect(requests.map((r) => r.body.model)).toEqual(['small', 'big']);
    const escalatedUser = requests[1]!.body.messages[1]!.content;
    const sent = JSON.parse(escalatedUser.slice(escalatedUser.indexOf('{'))) as {
      turns: Array<{ turn: number }>;
    };
    expect(sent.turns.map((t) => t.turn)).toEqual([3]);
    expect(out.map((s) => [s.subject, s.confidence])).toEqual([
      ['confident', 0.9],
      ['staging cluster', 0.8],
    ]);
  });

  it('Given no low-confidence items, When it extracts with an escalation model, Then the stronger model is not called', async () => {
    handler = (_req, res) => send(res, 200, statementsReply([item({ confidence: 0.7 })]));
    await createChatExtractor({ baseUrl, model: 'small', escalationModel: 'big' }).extract(INPUT);
    expect(requests.map((r) => r.body.model)).toEqual(['small']);
  });

  it('Given the escalation model is down, When it extracts, Then the first-pass items are kept', async () => {
    handler = (req, res) =>
      req.body.model === 'small'
        ? send(res, 200, statementsReply([item({ subject: 'unsure', confidence: 0.2 })]))
        : send(res, 503, '{"error":"overloaded"}');
    const out = await createChatExtractor({ baseUrl, model: 'small', escalationModel: 'big' }).extract(INPUT);
    expect(out.map((s) => s.subject)).toEqual(['unsure']);
  });
});

describe('chat extractor: failures', () => {
  it('Given the API answers 500, When it extracts, Then UNAVAILABLE (retryable) without the key', async () => {
    handler = (_req, res) => send(res, 500, JSON.stringify({ error: `upstream failed for key ${API_KEY}` }));
    const err = await failure(createChatExtractor({ baseUrl, apiKey: API_KEY, model: 'm' }).extract(INPUT));
    expect(err.code).toBe('UNAVAILABLE');
    expect(err.retryable).toBe(true);
    expectNoKey(err);
  });

  it('Given a reply that is not JSON, When it extracts, Then INTERNAL', async () => {
    handler = (_req, res) => send(res, 200, completion('{"statements": [ this is not json'));
    const err = await failure(createChatExtractor({ baseUrl, apiKey: API_KEY, model: 'm' }).extract(INPUT));
    expect(err.code).toBe('INTERNAL');
    expectNoKey(err);
  });

  it('Given a response envelope that is not JSON or not a completion, When it extracts, Then INTERNAL', async () => {
    handler = (_req, res) => send(res, 200, '<html>gateway</html>');
    expect((await failure(createChatExtractor({ baseUrl, model: 'm' }).extract(INPUT))).code).toBe(
      'INTERNAL',
    );
    handler = (_req, res) => send(res, 200, JSON.stringify({ choices: [] }));
    expect((await failure(createChatExtractor({ baseUrl, model: 'm' }).extract(INPUT))).code).toBe(
      'INTERNAL',
    );
    handler = (_req, res) => send(res, 200, completion(JSON.stringify({ facts: [] })));
    expect((await failure(createChatExtractor({ baseUrl, model: 'm' }).extract(INPUT))).code).toBe(
      'INTERNAL',
    );
  });

  it('Given a 401 whose body echoes the key, When it extracts, Then INTERNAL and the key appears nowhere in the error', async () => {
    handler = (_req, res) =>
      send(res, 401, JSON.stringify({ error: { message: `Incorrect API key provided: ${API_KEY}` } }));
    const err = await failure(createChatExtractor({ baseUrl, apiKey: API_KEY, model: 'm' }).extract(INPUT));
    expect(err.code).toBe('INTERNAL');
    expect(err.message).toMatch(/HTTP 401/);
    expectNoKey(err);
  });

  it('Given a slow API, When the timeout passes, Then UNAVAILABLE', async () => {
    handler = (_req, res) => {
      setTimeout(() => send(res, 200, statementsReply([])), 1_000).unref();
    };
    const err = await failure(
      createChatExtractor({ baseUrl, apiKey: API_KEY, model: 'm', timeoutMs: 50 }).extract(INPUT),
    );
    expect(err.code).toBe('UNAVAILABLE');
    expect(err.message).toMatch(/timed out/);
    expectNoKey(err);
  });

  it('Given nothing listening, When it extracts, Then UNAVAILABLE without the key', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const err = await failure(
      createChatExtractor({ baseUrl: `http://127.0.0.1:${port}`, apiKey: API_KEY, model: 'm' }).extract(
        INPUT,
      ),
    );
    expect(err.code).toBe('UNAVAILABLE');
    expectNoKey(err);
  });
});
