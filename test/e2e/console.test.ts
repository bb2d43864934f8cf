import { existsSync, mkdirSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { freshTenant, PROPOSE, proposal, REVISE, startApp, type TestApp } from '../support/harness.ts';

/**
 * The operator console in headless Chromium (Debian's `chromium`, driven by playwright-core) against a
 * real Muninn on the real stack: sign-in with the user's own token, each view, one proposal approved end
 * to end, and record text that looks like markup rendered as text. A screenshot of each view goes to
 * test-results/console/. Without Chromium this file FAILS (it never skips): `.ci/run` installs it.
 */

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = 'test-results/console';
const XSS = `<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>`;

let app: TestApp;
let browser: Browser;
let consoleUrl: string;
let tenant: string;
const tokens = { writer: '', reviewer: '', admin: '', reader: '' };
const pageErrors: string[] = [];

type Receipt = { outcome: string; recordId: string; version: number; reason: string | null };

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `the console test needs Chromium at ${CHROMIUM}: install the Debian package "chromium" ` +
        '(apt-get update && apt-get install -y chromium); .ci/run does this on CI',
    );
  mkdirSync(SHOTS, { recursive: true });
  app = await startApp();
  consoleUrl = app.url.replace(/\/graphql$/, '/console/');
  tenant = freshTenant('console');
  tokens.writer = await app.token({ tenant, sub: 'writer-bot', scopes: ['read', 'write'] });
  tokens.reviewer = await app.token({ tenant, sub: 'rita', scopes: ['read', 'review'] });
  tokens.admin = await app.token({ tenant, sub: 'root', scopes: ['admin'] });
  tokens.reader = await app.token({ tenant, sub: 'reader', scopes: ['read'] });
  // Chromium refuses to run as root inside its sandbox; CI containers run as root.
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
});
beforeEach(() => {
  pageErrors.length = 0;
});
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function propose(o: Record<string, unknown>): Promise<Receipt> {
  const r = await app.gql<{ propose: Receipt }>(tokens.writer, PROPOSE, { input: proposal(o) });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data!.propose;
}

/** A fresh browser context (its own sessionStorage), signed in with `token`, on `view`. */
async function open(token: string, view: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  // CSP violations and script errors surface here; any of them fails the test that caused it.
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
  await page.goto(`${consoleUrl}#${view}`);
  await page.fill('#token-input', token);
  await page.click('#signin button[type=submit]');
  await page.waitForSelector('#whoami:not([hidden])');
  return page;
}

const shot = (page: Page, name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });

/** No element was made from record text, and no injected handler ran. */
async function expectNoMarkupFromData(page: Page) {
  expect(await page.locator('#view img, #view script, #view iframe').count()).toBe(0);
  // (expressions as strings: the browser's globals are not in this Node project's type library)
  expect(await page.evaluate<unknown>('window.__xss')).toBeUndefined();
}

describe('serving /console', () => {
  it('serves the page with a strict CSP, redirects /console to /console/, allows only its own files', async () => {
    const base = app.url.replace(/\/graphql$/, '');
    const redirect = await fetch(`${base}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.get('location')).toBe('/console/');
    const page = await fetch(`${base}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await page.text()).toContain('<script type="module" src="app.js">');
    const client = await fetch(`${base}/console/vendor/graphql-ws/client.js`);
    expect(client.status).toBe(200);
    expect(client.headers.get('content-type')).toMatch(/^text\/javascript/);
    for (const path of ['/console/%2e%2e/package.json', '/console/..%2fsrc/main.ts', '/console/nope.js'])
      expect((await fetch(`${base}${path}`)).status, path).toBe(404);
    expect((await fetch(`${base}/console/`, { method: 'POST' })).status).toBe(405);
  });

  it('MUNINN_CONSOLE=off: /console is 404 and GraphQL still answers', async () => {
    const off = await startApp({ MUNINN_CONSOLE: 'off', MUNINN_ROLE: 'api' });
    try {
      const base = off.url.replace(/\/graphql$/, '');
      expect((await fetch(`${base}/console/`)).status).toBe(404);
      expect((await fetch(`${base}/console/app.js`)).status).toBe(404);
      const r = await off.gql(await off.token({ tenant }), '{ __typename }');
      expect(r.data).toEqual({ __typename: 'Query' });
    } finally {
      await off.stop();
    }
  });
});

describe('the console in Chromium', () => {
  it('keeps the token in sessionStorage only (no cookie, no localStorage) and forgets it on sign-out', async () => {
    const page = await open(tokens.reviewer, 'review');
    expect(await page.textContent('#whoami-text')).toContain(`rita @ ${tenant}`);
    const stored = await page.evaluate<{ session: string[][]; local: number; cookie: string }>(`({
      session: Object.keys(sessionStorage).map((k) => [k, sessionStorage.getItem(k)]),
      local: localStorage.length,
      cookie: document.cookie,
    })`);
    expect(stored.session).toContainEqual(['muninn.console.token', tokens.reviewer]);
    expect(stored.local).toBe(0);
    expect(stored.cookie).toBe('');
    expect(await page.context().cookies()).toEqual([]);
    await page.click('#signout');
    await page.waitForSelector('#signin:not([hidden])');
    expect(await page.evaluate<unknown>(`sessionStorage.getItem('muninn.console.token')`)).toBeNull();
    await page.context().close();
    expect(pageErrors).toEqual([]);
  });

  it('review queue: a second principal proposes, the proposal arrives live, the reviewer approves it in the console, GraphQL reads it ACTIVE', async () => {
    const namespace = `ops/review-${randomUUID().slice(0, 6)}`;
    const page = await open(tokens.reviewer, 'review');
    await page.fill('#review-namespace', namespace);
    await page.click('#view form button[type=submit]');
    await page.waitForSelector('#review-list .empty');

    // proposed after the view is open: it can only arrive through the subscription
    const text = `Every deploy to the ${namespace} cluster needs a change ticket.`;
    const r = await propose({
      namespace,
      class: 'NORMATIVE',
      statement: { subject: 'deploys', predicate: 'need', object: 'a change ticket', text },
    });
    expect(r.outcome).toBe('QUEUED');
    const card = page.locator(`#review-list li.card[data-id="${r.recordId}"]`);
    await card.waitFor();
    expect(await card.locator('.record-text').textContent()).toBe(text);
    expect(await card.textContent()).toContain('writer-bot');
    await shot(page, 'review');

    await card.locator('button.approve').click();
    await card.waitFor({ state: 'detached' });
    expect(await page.textContent('#review-log')).toContain(`${r.recordId} v${r.version}: ADMITTED`);
    const read = await app.gql<{ record: { status: string; version: number } }>(
      tokens.writer,
      `query R($id: ID!) { record(id: $id) { status version } }`,
      { id: r.recordId },
    );
    expect(read.errors).toBeUndefined();
    expect(read.data!.record.status).toBe('ACTIVE');
    expect(read.data!.record.version).toBeGreaterThan(r.version);
    await page.context().close();
    expect(pageErrors).toEqual([]);
  });

  it('record text containing <img src=x onerror=…> and <script> renders as text in the review queue, recall and timeline', async () => {
    const namespace = `ops/xss-${randomUUID().slice(0, 6)}`;
    const text = `Quokka rollback checklist ${XSS} end.`;
    const r = await propose({
      namespace,
      class: 'NORMATIVE',
      statement: { subject: 'quokka rollback', predicate: 'follows', object: 'the checklist', text },
    });
    expect(r.outcome).toBe('QUEUED');

    const page = await open(tokens.reviewer, 'review');
    await page.fill('#review-namespace', namespace);
    await page.click('#view form button[type=submit]');
    const card = page.locator(`#review-list li.card[data-id="${r.recordId}"]`);
    await card.waitFor();
    expect(await card.locator('.record-text').textContent()).toContain(
      '<img src=x onerror="window.__xss=1">',
    );
    await expectNoMarkupFromData(page);
    await card.locator('button.approve').click();
    await card.waitFor({ state: 'detached' });

    await page.goto(`${consoleUrl}#recall`);
    await page.fill('#recall-query', 'quokka rollback checklist');
    await page.fill('#recall-namespace', namespace);
    await page.click('#recall-run');
    await page.waitForSelector(`#recall-items li[data-id="${r.recordId}"]`);
    expect(
      await page.locator(`#recall-items li[data-id="${r.recordId}"] .record-text`).textContent(),
    ).toContain('onerror=');
    await expectNoMarkupFromData(page);

    await page.goto(`${consoleUrl}#timeline/${r.recordId}`);
    await page.waitForSelector('#timeline-text');
    expect(await page.textContent('#timeline-text')).toBe(text);
    await expectNoMarkupFromData(page);
    await page.context().close();
    expect(pageErrors).toEqual([]);
  });

  it('projection lag per partition updates live for an admin (high watermarks grow as writes are appended); a reader sees only health', async () => {
    // offsets and lag are an admin's to see; a reader learns only whether the projector is healthy
    const reader = await open(tokens.reader, 'lag');
    await reader.waitForSelector('#lag-health');
    expect(await reader.textContent('#lag-body')).toContain('admin scope');
    expect(await reader.locator('#lag-table').count()).toBe(0);
    await reader.context().close();

    const page = await open(tokens.admin, 'lag');
    await page.waitForSelector('#lag-table tbody tr');
    const partitions = app.config.kafka.partitions;
    expect(await page.locator('#lag-table tbody tr').count()).toBe(partitions);
    const watermarks = () =>
      page.$$eval('#lag-table tbody tr', (rows) =>
        rows.reduce((s, tr) => s + Number(tr.children[2]?.textContent ?? 0), 0),
      );
    const before = await watermarks();
    for (let i = 0; i < 3; i++) await propose({ namespace: 'ops/lag', await: false });
    await expect.poll(watermarks, { timeout: 15_000 }).toBeGreaterThanOrEqual(before + 3);
    expect(await page.textContent('#lag-health')).toBe('projector healthy');
    await shot(page, 'lag');
    await page.context().close();
    expect(pageErrors).toEqual([]);
  });

  it('recall playground: every item shows why (arms, signals), and the envelope is shown', async () => {
    const namespace = `ops/recall-${randomUUID().slice(0, 6)}`;
    for (const [subject, object] of [
      ['wombat-api', 'postgres'],
      ['wombat-worker', 'redis'],
      ['wombat-gateway', 'envoy'],
    ] as const)
      await propose({
        namespace,
        statement: { subject, predicate: 'uses', object, text: `The ${subject} service uses ${object}.` },
      });
    const page = await open(tokens.reader, 'recall');
    await page.fill('#recall-query', 'what does the wombat service use');
    await page.fill('#recall-namespace', namespace);
    await page.click('#recall-run');
    await page.waitForSelector('#recall-items');
    const items = page.locator('#recall-items > li');
    expect(await items.count()).toBe(3);
    for (const item of await items.all()) {
      expect(await item.locator('.why dl').textContent()).toMatch(/arms(lexical|vector|graph|scope) #\d/);
      expect(await item.locator('.why table.signals tbody tr').count()).toBeGreaterThan(0);
    }
    const envelope = await page.textContent('#recall-envelope');
    expect(envelope).toContain('<muninn-memory');
    expect(envelope).toContain('The wombat-api service uses postgres.');
    await shot(page, 'recall');
    await page.context().close();
    expect(pageErrors).toEqual([]);
  });

  it('timeline: revisions on both time axes, a supersession and a contest', async () => {
    const namespace = `ops/timeline-${randomUUID().slice(0, 6)}`;
    const subject = `queue-${randomUUID().slice(0, 6)}`;
    const a = await propose({
      namespace,
      statement: { subject, predicate: 'runs on', object: 'rabbitmq', text: `${subject} runs on RabbitMQ.` },
    });
    const revised = await app.gql<{ revise: Receipt }>(tokens.writer, REVISE, {
      input: {
        id: a.recordId,
        expectedVersion: a.version,
        statement: {
          subject,
          predicate: 'runs on',
          object: 'rabbitmq',
          text: `${subject} runs on RabbitMQ 3.13.`,
        },
        purpose: 'test',
        idempotencyKey: randomUUID(),
      },
    });
    expect(revised.data?.revise.outcome, JSON.stringify(revised.errors)).toBe('REVISED');
    const b = await propose({
      namespace,
      statement: { subject, predicate: 'runs on', object: 'kafka', text: `${subject} now runs on Kafka.` },
    });
    expect(b.outcome).toBe('SUPERSEDED');
    const start = new Date(Date.now() - 5 * 86_400_000).toISOString();
    const cache = `cache-${randomUUID().slice(0, 6)}`;
    const c = await propose({
      namespace,
      validFrom: start,
      statement: {
        subject: cache,
        predicate: 'stores sessions in',
        object: 'redis',
        text: `${cache} stores sessions in Redis.`,
      },
    });
    const d = await propose({
      namespace,
      validFrom: start,
      statement: {
        subject: cache,
        predicate: 'stores sessions in',
        object: 'memcached',
        text: `${cache} stores sessions in Memcached.`,
      },
    });
    expect(d.outcome).toBe('CONTESTED');

    const history = await app.gql<{ history: unknown[] }>(
      tokens.writer,
      `query H($id: ID!) { history(id: $id) { version } }`,
      {
        id: a.recordId,
      },
    );
    const versions = history.data!.history.length;
    expect(versions).toBeGreaterThanOrEqual(3); // proposed, revised, superseded

    const page = await open(tokens.reader, `timeline/${a.recordId}`);
    await page.waitForSelector('#timeline-revisions');
    expect(await page.locator('#timeline-revisions tbody tr').count()).toBe(versions);
    expect(await page.locator('#timeline-chart g.rev').count()).toBe(versions);
    expect(await page.locator('#timeline-chart g.rev.superseded').count()).toBeGreaterThan(0);
    const supersession = await page.textContent('#timeline-relations');
    expect(supersession).toContain('superseded by');
    expect(supersession).toContain(b.recordId);
    await shot(page, 'timeline');

    // follow the contest from the other side: C's timeline names D
    await page.goto(`${consoleUrl}#timeline/${c.recordId}`);
    await page.waitForSelector('#timeline-relations');
    const contest = await page.textContent('#timeline-relations');
    expect(contest).toMatch(/contest(s|ed by)/);
    expect(contest).toContain(d.recordId);
    await page.context().close();
    expect(pageErrors).toEqual([]);
  });

  it('grants: an admin lists, grants and revokes in the console; a non-admin is told it needs the admin scope', async () => {
    const denied = await open(tokens.reader, 'grants');
    await denied.waitForSelector('#grants-out .note.error');
    expect(await denied.textContent('#grants-out')).toContain('needs the admin scope');
    await denied.context().close();

    const page = await open(tokens.admin, 'grants');
    await page.waitForSelector('#grant-form');
    await page.fill('#grant-sub', 'alice');
    await page.fill('#grant-namespace', 'ops/payments');
    await page.selectOption('#grant-label', 'CONFIDENTIAL');
    await page.fill('#grant-purposes', 'incident, code-change');
    await page.fill('#grant-reason', 'on-call rota');
    await page.click('#grant-form button[type=submit]');
    await page.waitForSelector('#grants-status .note.ok');
    const row = page.locator('#grants-table tbody tr', { hasText: 'ops/payments' });
    await row.waitFor();
    expect(await row.textContent()).toMatch(/code-change, incident|incident, code-change/);
    await shot(page, 'grants');

    await row.locator('input.reason').fill('rota ended');
    await row.locator('button.reject').click();
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain('revoked');
    const listed = await app.gql<{
      grants: Array<{ namespace: string; revokedAt: string | null; purposes: string[] }>;
    }>(tokens.admin, `{ grants { namespace revokedAt purposes } }`);
    const g = listed.data!.grants.find((x) => x.namespace === 'ops/payments')!;
    expect([...g.purposes].sort()).toEqual(['code-change', 'incident']);
    expect(g.revokedAt).not.toBeNull();
    await page.context().close();
    expect(pageErrors).toEqual([]);
  });
});
