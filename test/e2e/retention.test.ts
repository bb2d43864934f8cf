import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/adapters/logger.ts';
import { receiptKey } from '../../src/domain/commands.ts';
import type { EventOf } from '../../src/domain/events.ts';
import { keyIdOf } from '../../src/domain/sealing.ts';
import { freshTenant, PROPOSE, proposal, startApp, type TestApp } from '../support/harness.ts';

/*
 * Issue #13, retention with a fake clock, on the real stack: rules as data (archive after 30 days, erase
 * after 365, in one namespace subtree), run by the scheduler inside the projector process. A legal hold
 * keeps its records through both; releasing it lets the next run erase them. Runs are idempotent (a run
 * with nothing due appends nothing) and resumable (an erasure cut short after its tombstone is finished),
 * and each run's progress is readable and logged. A namespace without a rule is never touched.
 */
const nonce = randomBytes(4).toString('hex');
const topic = `muninn.test.retention.${nonce}`;
const tenant = freshTenant('retain');
const DAY = 86_400_000;
const start = Date.now() + 1000;
let now = new Date(start);
const at = (days: number) => (now = new Date(start + days * DAY));

const RECORD = `query R($id: ID!) { record(id: $id) { id status statement { text } } }`;
const HISTORY = `query H($id: ID!) { history(id: $id) { version status reason } }`;
const PLACE = `mutation P($input: PlaceHoldInput!) { placeHold(input: $input) { holdId outcome } }`;
const RELEASE = `mutation R($input: ReleaseHoldInput!) { releaseHold(input: $input) { holdId outcome } }`;

let app: TestApp;
const logs: string[] = [];
let admin: string;
let writer: string;
/** a: in the ruled namespace; held: under a namespace hold; free: where no rule applies; cut: erasure cut short. */
const ids = { a: '', held: '', free: '', cut: '' };
let holdId = '';

const ledgerSize = async () =>
  (await app.m.ledger.offsets()).reduce((s, o) => s + BigInt(o.highWatermark), 0n);
const status = async (id: string) =>
  (await app.gql<{ record: { status: string; statement: { text: string } } }>(admin, RECORD, { id })).data!
    .record;
const keyState = (id: string) => app.m.keys.state(keyIdOf(tenant, 'record', id));
const run = () => app.m.retention!.runOnce();

async function propose(namespace: string): Promise<string> {
  const r = await app.gql<{ propose: { recordId: string; outcome: string } }>(writer, PROPOSE, {
    input: proposal({ namespace }),
  });
  expect(r.errors).toBeUndefined();
  expect(r.data!.propose.outcome).toBe('ADMITTED');
  return r.data!.propose.recordId;
}

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(chunk.toString('utf8'));
      cb();
    },
  });
  const rules = join(mkdtempSync(join(tmpdir(), 'muninn-retention-')), 'rules.json');
  writeFileSync(
    rules,
    JSON.stringify([{ tenant, namespace: 'acme/chat', archiveAfterDays: 30, eraseAfterDays: 365 }]),
  );
  app = await startApp(
    {
      MUNINN_LEDGER_TOPIC: topic,
      MUNINN_DLQ_TOPIC: `${topic}.dlq`,
      MUNINN_PROJECTOR_GROUP: `retention-${nonce}`,
      MUNINN_EMBEDDER: 'hashing',
      MUNINN_RETENTION_RULES: rules,
      // Only the run at start fires by itself; the test drives the others with its clock.
      MUNINN_RETENTION_INTERVAL_MS: String(24 * 3_600_000),
    },
    createLogger('info', 'muninn', sink),
    { retentionClock: { now: () => now } },
  );
  admin = await app.token({ tenant, sub: 'records-officer', scopes: ['admin'] });
  writer = await app.token({ tenant, sub: 'chat-agent', scopes: ['read', 'write'] });
  ids.a = await propose('acme/chat/support');
  ids.held = await propose('acme/chat/case-17');
  ids.free = await propose('acme/wiki');
  ids.cut = await propose('acme/chat/support');
  const placed = await app.gql<{ placeHold: { holdId: string; outcome: string } }>(admin, PLACE, {
    input: { namespace: 'acme/chat/case-17', reason: 'litigation 17', idempotencyKey: randomUUID() },
  });
  expect(placed.data?.placeHold.outcome).toBe('ADMITTED');
  holdId = placed.data!.placeHold.holdId;
}, 300_000);

afterAll(async () => {
  await app?.stop();
});

describe('retention with a fake clock, and legal hold', () => {
  it('day 0: nothing is due, nothing is appended', async () => {
    const before = await ledgerSize();
    const p = await run();
    expect(p).toMatchObject({ due: 0, archived: 0, erased: 0, held: 0, failed: 0, running: false });
    expect(await ledgerSize()).toBe(before);
    for (const id of Object.values(ids)) expect((await status(id)).status).toBe('ACTIVE');
  });

  it('day 31: archives the ruled record; the held one waits; the unruled one is untouched', async () => {
    at(31);
    const p = await run();
    expect(p).toMatchObject({ due: 2, archived: 2, erased: 0, held: 1, heldRecords: [ids.held] });
    expect(p.lastRunAt).toBe(now.toISOString());
    expect((await status(ids.a)).status).toBe('ARCHIVED');
    const h = await app.gql<{ history: Array<{ status: string; reason: string | null }> }>(admin, HISTORY, {
      id: ids.a,
    });
    expect(h.data!.history.at(-1)).toMatchObject({
      status: 'ARCHIVED',
      reason: `retention ${tenant}:acme/chat`,
    });
    expect((await status(ids.held)).status).toBe('ACTIVE');
    expect((await status(ids.free)).status).toBe('ACTIVE');
    expect(logs.join('')).toContain('"event":"retention"');
  });

  it('the same run again appends nothing (idempotent), also when two overlap', async () => {
    const before = await ledgerSize();
    const [p, q] = await Promise.all([run(), run()]);
    for (const x of [p, q]) expect(x).toMatchObject({ due: 0, archived: 0, erased: 0, held: 1 });
    expect(await ledgerSize()).toBe(before);
  });

  it('an erasure cut short after its tombstone (key still alive) is finished by the next run', async () => {
    // As if a run crashed between appending the tombstone and destroying the key.
    const tomb: EventOf<'Erased'> = {
      eventId: randomUUID(),
      type: 'Erased',
      schemaVersion: 1,
      tenant,
      namespace: 'acme/chat/support',
      idempotencyKey: receiptKey({ iss: 'muninn', sub: 'test' }, randomUUID(), 'derived'),
      commandHash: 'c'.repeat(64),
      principal: { iss: 'muninn', sub: 'test' },
      actors: [],
      purpose: 'erasure',
      changesetId: null,
      recordedAt: new Date().toISOString(),
      payload: { target: 'RECORD', id: ids.cut, erasureId: randomUUID(), reason: 'interrupted' },
    };
    await app.m.ledger.append([tomb]);
    for (let i = 0; i < 300 && (await status(ids.cut)).status !== 'ERASED'; i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(await keyState(ids.cut)).toBe('ACTIVE');
    const p = await run();
    expect(p).toMatchObject({ due: 1, erased: 1, held: 1, failed: 0 });
    expect(await keyState(ids.cut)).toBe('DESTROYED');
  });

  it('day 366: erases the ruled record (graph and key); the hold still keeps its record', async () => {
    at(366);
    const p = await run();
    expect(p).toMatchObject({ due: 1, archived: 0, erased: 1, held: 1, failed: 0, heldRecords: [ids.held] });
    expect(await status(ids.a)).toMatchObject({ status: 'ERASED', statement: { text: '[erased]' } });
    expect(await keyState(ids.a)).toBe('DESTROYED');
    expect((await status(ids.held)).status).toBe('ACTIVE');
    expect(await keyState(ids.held)).toBe('ACTIVE');
    expect((await status(ids.free)).status).toBe('ACTIVE');
  });

  it('releasing the hold lets the next run erase its record; after that nothing is due', async () => {
    const released = await app.gql<{ releaseHold: { outcome: string } }>(admin, RELEASE, {
      input: { holdId, reason: 'case closed', idempotencyKey: randomUUID() },
    });
    expect(released.data!.releaseHold.outcome).toBe('ADMITTED');
    const p = await run();
    expect(p).toMatchObject({ due: 1, erased: 1, held: 0, heldRecords: [], failed: 0 });
    expect(await status(ids.held)).toMatchObject({ status: 'ERASED', statement: { text: '[erased]' } });
    expect(await keyState(ids.held)).toBe('DESTROYED');

    const before = await ledgerSize();
    expect(await run()).toMatchObject({ due: 0, archived: 0, erased: 0, held: 0 });
    expect(await ledgerSize()).toBe(before);
    expect((await status(ids.free)).status).toBe('ACTIVE');
    expect(await keyState(ids.free)).toBe('ACTIVE');
  });
});
