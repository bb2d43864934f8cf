import { createServer, type Server } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpSessionSource } from '../../src/handoff/http-source.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'hermes');
let server: Server;
let base: string;
const seen: { url: string; auth: string | undefined }[] = [];

beforeAll(async () => {
  const stable = await readFile(join(FIXTURES, 'signal-stable.json'), 'utf8');
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', auth: req.headers.authorization });
    if (req.url === '/api/sessions') {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          sessions: [
            { id: 'sess-signal-0001', source: 'signal', owner: 'owner-alice', revision: 'rev-0001-a' },
          ],
        }),
      );
    } else if (req.url === '/api/sessions/sess-signal-0001') res.end(stable);
    else if (req.url === '/api/sessions/big') res.end('x'.repeat(5000));
    else if (req.url === '/api/sessions/redirect') {
      res.statusCode = 302;
      res.setHeader('location', 'http://example.invalid/');
      res.end();
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  if (!addr || typeof addr === 'string') throw new Error('no port');
  base = `http://127.0.0.1:${addr.port}/api`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('httpSessionSource', () => {
  it('lists and fetches sessions with the bearer token', async () => {
    const src = httpSessionSource({ baseUrl: base, token: 'synthetic-token' });
    expect(await src.listSessions()).toEqual([
      {
        id: 'sess-signal-0001',
        source: 'signal',
        owner: 'owner-alice',
        revision: 'rev-0001-a',
        updatedAt: undefined,
      },
    ]);
    const s = (await src.getSession('sess-signal-0001')) as { id: string };
    expect(s.id).toBe('sess-signal-0001');
    expect(seen.every((x) => x.auth === 'Bearer synthetic-token')).toBe(true);
  });

  it('bounds size, refuses redirects and non-2xx, and never echoes the token', async () => {
    const src = httpSessionSource({ baseUrl: base, token: 'synthetic-token', maxBytes: 1000 });
    await expect(src.getSession('big')).rejects.toThrow(/TOO_LARGE/);
    await expect(src.getSession('redirect')).rejects.toThrow(/NETWORK|HTTP_STATUS/);
    const err = await src.getSession('missing').catch((e: unknown) => e);
    expect(String(err)).toMatch(/HTTP_STATUS/);
    expect(String(err)).not.toContain('synthetic-token');
    expect(() => httpSessionSource({ baseUrl: 'http://u:p@127.0.0.1/' })).toThrow(/credentials/);
  });
});
