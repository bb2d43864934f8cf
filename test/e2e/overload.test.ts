import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshTenant, PROPOSE, proposal, startApp, type TestApp } from '../support/harness.ts';

/**
 * The write path's busy rule through the real server (src/ingest/overload.ts): while the process's event
 * loop is busier than MUNINN_WRITE_MAX_BUSY and MUNINN_WRITE_BUSY_FLOOR writes are in progress, a write is
 * refused at once with RATE_LIMITED, retryable, with `retryAfterMs`; once the loop has room again, writes
 * are admitted. The app runs in this process, so a hog here (slices of busy-waiting) makes its loop busy.
 */
let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startApp({
    MUNINN_WRITE_MAX_BUSY: '0.6',
    MUNINN_WRITE_BUSY_FLOOR: '1',
    MUNINN_EMBEDDER: 'hashing',
  });
  token = await app.token({ tenant: freshTenant('overload'), scopes: ['read', 'write'] });
});
afterAll(() => app?.stop());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Holds the loop busy in 30 ms slices, letting everything else run between them, until stopped. */
function hog(): () => Promise<void> {
  let on = true;
  const done = (async () => {
    while (on) {
      const end = Date.now() + 30;
      while (Date.now() < end);
      await new Promise((r) => setImmediate(r));
    }
  })();
  return async () => {
    on = false;
    await done;
  };
}

describe('overload: a busy loop', () => {
  it('refuses writes past the floor at once with a retryable RATE_LIMITED, and admits them once it has room', async () => {
    const stop = hog();
    await sleep(800); // a few of the sampler's windows
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        app.gql<{ propose: { outcome: string } }>(token, PROPOSE, {
          input: { ...proposal({ namespace: 'acme/overload' }), await: false },
        }),
      ),
    );
    await stop();
    const refused = answers.filter((a) => a.errors?.[0]?.extensions?.['code'] === 'RATE_LIMITED');
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]!.errors![0]!.extensions).toMatchObject({
      retryable: true,
      retryAfterMs: 250,
      reason: 'overloaded',
    });
    expect(Number(refused[0]!.errors![0]!.extensions!['busyPercent'])).toBeGreaterThan(60);
    // Every answer is either admitted or that refusal: nothing else went wrong.
    for (const a of answers)
      if (!refused.includes(a)) expect(a.data?.propose?.outcome, JSON.stringify(a.errors)).toBe('PENDING');

    // Without the hog the loop calms down (the writes' own work and the projection go on meanwhile): two
    // writes at once are admitted again within seconds.
    const deadline = Date.now() + 15_000;
    let admittedBoth = false;
    while (!admittedBoth && Date.now() < deadline) {
      await sleep(300);
      const pair = await Promise.all(
        [1, 2].map(() =>
          app.gql<{ propose: { outcome: string } }>(token, PROPOSE, {
            input: { ...proposal({ namespace: 'acme/overload' }), await: false },
          }),
        ),
      );
      admittedBoth = pair.every((a) => a.data?.propose?.outcome === 'PENDING');
    }
    expect(admittedBoth).toBe(true);
  });
});
