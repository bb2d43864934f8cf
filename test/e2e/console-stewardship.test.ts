import { existsSync, mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { freshTenant, PROPOSE, proposal, startApp, type TestApp } from '../support/harness.ts';

/**
 * The console's Stewardship view in headless Chromium (as test/e2e/console.test.ts): a reviewer sees the
 * namespace's scorecard, its owners and the steward's open finding; a reader without the review scope
 * is refused. A screenshot goes to test-results/console/. Without Chromium this file FAILS.
 */
const CHROMIUM = '/usr/bin/chromium';
const SHOTS = 'test-results/console';
const nonce = randomBytes(4).toString('hex');
const tenant = freshTenant('console-steward');
const DAY = 86_400_000;

let app: TestApp;
let browser: Browser;
let consoleUrl: string;
let staleId = '';
const tokens = { writer: '', reviewer: '', reader: '', admin: '' };
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`the console test needs Chromium at ${CHROMIUM}`);
  mkdirSync(SHOTS, { recursive: true });
  app = await startApp({
    MUNINN_LEDGER_TOPIC: `muninn.test.console-steward.${nonce}`,
    MUNINN_DLQ_TOPIC: `muninn.test.console-steward.${nonce}.dlq`,
    MUNINN_PROJECTOR_GROUP: `console-steward-${nonce}`,
    MUNINN_EMBEDDER: 'hashing',
    MUNINN_STEWARD: 'true',
    MUNINN_STEWARD_TENANTS: tenant,
    MUNINN_STEWARD_INTERVAL_MS: String(DAY),
  });
  consoleUrl = app.url.replace(/\/graphql$/, '/console/');
  tokens.writer = await app.token({ tenant, sub: 'writer', scopes: ['read', 'write'] });
  tokens.reviewer = await app.token({ tenant, sub: 'rita', scopes: ['read', 'review'] });
  tokens.reader = await app.token({ tenant, sub: 'reader', scopes: ['read'] });
  tokens.admin = await app.token({ tenant, sub: 'root', scopes: ['admin'] });
  // A record whose validity ended yesterday but that is still ACTIVE: the steward's STALE finding.
  const r = await app.gql<{ propose: { recordId: string; outcome: string } }>(tokens.writer, PROPOSE, {
    input: proposal({
      namespace: 'acme/steward',
      validFrom: new Date(Date.now() - 10 * DAY).toISOString(),
      validTo: new Date(Date.now() - DAY).toISOString(),
    }),
  });
  expect(r.data!.propose.outcome).toBe('ADMITTED');
  staleId = r.data!.propose.recordId;
  const g = await app.gql(
    tokens.admin,
    `mutation G($input: GrantAccessInput!) { grantAccess(input: $input) { outcome } }`,
    {
      input: {
        grantee: { sub: 'olga' },
        namespace: 'acme',
        maxSensitivity: 'INTERNAL',
        role: 'OWNER',
        reason: 'owns acme',
        idempotencyKey: `own-${nonce}`,
      },
    },
  );
  expect(g.errors).toBeUndefined();
  await app.m.steward!.runOnce();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function open(token: string): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`${consoleUrl}#stewardship`);
  await page.fill('#token-input', token);
  await page.click('#signin button[type=submit]');
  await page.waitForSelector('#whoami:not([hidden])');
  await page.fill('#steward-namespace', 'acme/steward');
  await page.click('#steward-form button[type=submit]');
  return page;
}

it('a reviewer sees the scorecard, the owner and the open STALE finding', async () => {
  const page = await open(tokens.reviewer);
  await page.waitForSelector('#steward-findings');
  const card = await page.textContent('#steward-scorecard');
  expect(card).toContain('1 (1 live, 0 waiting for review)');
  expect(card).toContain('0.0 % of live records within validity');
  expect(card).toContain('olga');
  const rows = await page.$$eval('#steward-findings tbody tr', (trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')),
  );
  expect(rows).toHaveLength(1);
  expect(rows[0]![0]).toBe('STALE');
  expect(rows[0]![3]).toContain(staleId);
  await page.screenshot({ path: `${SHOTS}/stewardship.png`, fullPage: true });
  expect(pageErrors).toEqual([]);
});

it('a reader without the review scope is refused', async () => {
  const page = await open(tokens.reader);
  await page.waitForSelector('#steward-out .note.error');
  expect(await page.textContent('#steward-out')).toContain('FORBIDDEN');
});
