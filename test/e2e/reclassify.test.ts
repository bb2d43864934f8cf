import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { receiptKey } from '../../src/domain/commands.ts';
import { freshTenant, REVISE, startApp, type TestApp } from '../support/harness.ts';
import { AWAIT, code, GRANT, propose, recall, who, type Receipt } from '../support/write-attacks.ts';

/**
 * Issue #14 part 3 on the real stack: reclassify, relabel and move a record through `revise`. The
 * negatives (no grant on the target namespace; lowering a label without the review scope) are refused
 * with a typed error and append nothing; after a move or a raised label, a reader entitled only to the
 * old namespace or the lower label no longer sees the record, by id or through recall.
 */

let app: TestApp;
let tenant: string;
let admin: string;
/** Write and read on acme/a only, up to CONFIDENTIAL; no review scope. */
let writer: string;
/** Read acme/a only (INTERNAL), and acme/b only. */
let readerA: string;
let readerB: string;
/** Review acme/b only; review acme/a and acme/b. */
let reviewerB: string;
let reviewerAB: string;
const AS_OF = `query R($id: ID!, $knownAt: DateTime!) { record(id: $id, asOf: { knownAt: $knownAt }) {
  id namespace class sensitivity status version } }`;
const PLACE = `mutation P($input: PlaceHoldInput!) { placeHold(input: $input) { holdId outcome } }`;
const RELEASE = `mutation R($input: ReleaseHoldInput!) { releaseHold(input: $input) { holdId outcome } }`;
const ROLLBACK = `mutation B($input: RollbackInput!) { rollback(input: $input) { outcome restored } }`;
const ledgerSize = async () =>
  (await app.m.ledger.offsets()).reduce((s, o) => s + BigInt(o.highWatermark), 0n);

const RECORD = `query R($id: ID!) { record(id: $id) { id namespace class sensitivity status version
  history { version status reason } } }`;
type RecordOut = {
  id: string;
  namespace: string;
  class: string;
  sensitivity: string;
  status: string;
  version: number;
  history: Array<{ version: number; status: string; reason: string | null }>;
};

async function grant(sub: string, namespace: string, maxSensitivity: string) {
  const r = await app.gql<{ grantAccess: { outcome: string } }>(admin, GRANT, {
    input: { grantee: { sub }, namespace, maxSensitivity, reason: 'test', idempotencyKey: randomUUID() },
  });
  expect(r.data?.grantAccess.outcome, JSON.stringify(r.errors)).toBe('ADMITTED');
}

const read = async (token: string, id: string) =>
  (await app.gql<{ record: RecordOut | null }>(token, RECORD, { id })).data?.record ?? null;

const revise = (token: string, input: Record<string, unknown>) =>
  app.gql<{ revise: Receipt }>(token, REVISE, {
    input: { purpose: 'test', idempotencyKey: randomUUID(), ...input },
  });

/** A fresh INTERNAL record in acme/a whose text contains a unique word (for recall). */
async function fresh(sensitivity = 'INTERNAL') {
  const word = `zq${randomUUID().slice(0, 8)}`;
  const r = await propose(app, admin, {
    namespace: 'acme/a',
    sensitivity,
    statement: {
      subject: word,
      predicate: 'runs on',
      object: 'kubernetes',
      text: `${word} runs on Kubernetes.`,
    },
  });
  return { id: r.recordId!, word };
}

beforeAll(async () => {
  app = await startApp(AWAIT);
  tenant = freshTenant('recl');
  admin = await app.token({ tenant, sub: 'root', scopes: ['admin'] });
  writer = await app.token({ tenant, sub: 'wanda', scopes: ['read', 'write'] });
  readerA = await app.token({ tenant, sub: 'ann', scopes: ['read'] });
  readerB = await app.token({ tenant, sub: 'ben', scopes: ['read'] });
  await grant('wanda', 'acme/a', 'CONFIDENTIAL');
  await grant('ann', 'acme/a', 'INTERNAL');
  await grant('ben', 'acme/b', 'RESTRICTED');
  reviewerB = await app.token({ tenant, sub: 'rhea', scopes: ['read', 'review'] });
  reviewerAB = await app.token({ tenant, sub: 'rex', scopes: ['read', 'review'] });
  await grant('rhea', 'acme/b', 'RESTRICTED');
  await grant('rex', 'acme/a', 'RESTRICTED');
  await grant('rex', 'acme/b', 'RESTRICTED');
});
afterAll(async () => app?.stop());

describe('reclassify and rescope through revise', () => {
  it('a move without a grant on the target namespace → FORBIDDEN, nothing appended', async () => {
    const { id } = await fresh();
    const key = `mv-${randomUUID()}`;
    const r = await revise(writer, {
      id,
      expectedVersion: 1,
      namespace: 'acme/b',
      reason: 'wrong team',
      idempotencyKey: key,
    });
    expect(code(r)).toBe('FORBIDDEN');
    expect(r.data?.revise ?? null).toBeNull();
    expect(await app.m.store.receipt(tenant, receiptKey(who(app, 'wanda'), key))).toBeUndefined();
    expect(await read(admin, id)).toMatchObject({ namespace: 'acme/a', version: 1 });
  });

  it('lowering a label without the review scope → FORBIDDEN, nothing appended; a reviewer may', async () => {
    const { id } = await fresh('CONFIDENTIAL');
    const key = `low-${randomUUID()}`;
    const r = await revise(writer, {
      id,
      expectedVersion: 1,
      sensitivity: 'INTERNAL',
      reason: 'not secret',
      idempotencyKey: key,
    });
    expect(code(r)).toBe('FORBIDDEN');
    expect(await app.m.store.receipt(tenant, receiptKey(who(app, 'wanda'), key))).toBeUndefined();
    expect(await read(admin, id)).toMatchObject({ sensitivity: 'CONFIDENTIAL', version: 1 });

    const reviewer = await app.token({ tenant, sub: 'rita', scopes: ['read', 'write', 'review'] });
    const ok = await revise(reviewer, {
      id,
      expectedVersion: 1,
      sensitivity: 'INTERNAL',
      reason: 'not secret',
    });
    expect(ok.data?.revise, JSON.stringify(ok.errors)).toMatchObject({ outcome: 'REVISED', version: 2 });
    expect(await read(readerA, id)).toMatchObject({ sensitivity: 'INTERNAL' });
  });

  it('a writer raises a label: an audited revision, and a reader below it no longer sees the record', async () => {
    const { id, word } = await fresh();
    expect((await recall(app, readerA, word, 'acme/a')).items.map((i) => i.record.id)).toContain(id);
    const r = await revise(writer, {
      id,
      expectedVersion: 1,
      sensitivity: 'CONFIDENTIAL',
      reason: 'names a customer',
    });
    expect(r.data?.revise, JSON.stringify(r.errors)).toMatchObject({ outcome: 'REVISED', version: 2 });
    const now = await read(writer, id);
    expect(now).toMatchObject({ sensitivity: 'CONFIDENTIAL', version: 2 });
    expect(now!.history.at(-1)!.reason).toBe('label INTERNAL→CONFIDENTIAL: names a customer');
    expect(await read(readerA, id)).toBeNull();
    expect((await recall(app, readerA, word, 'acme/a')).items.map((i) => i.record.id)).not.toContain(id);
  });

  it('a move keeps id and history; readers of the old namespace lose it, readers of the new one get it', async () => {
    const { id, word } = await fresh();
    const beforeMove = new Date().toISOString();
    await new Promise((res) => setTimeout(res, 20));
    const r = await revise(admin, {
      id,
      expectedVersion: 1,
      namespace: 'acme/b',
      class: 'DECISION',
      reason: 'owned by team b',
    });
    expect(r.data?.revise, JSON.stringify(r.errors)).toMatchObject({ outcome: 'REVISED', version: 2 });
    const moved = await read(readerB, id);
    expect(moved).toMatchObject({ id, namespace: 'acme/b', class: 'DECISION', version: 2 });
    expect(moved!.history.map((h) => h.version)).toEqual([1, 2]);
    expect(moved!.history[1]!.reason).toBe('class FACT→DECISION; moved acme/a→acme/b: owned by team b');
    // What was believed before the move: the class and namespace it had then (to those who may see it now).
    const then = await app.gql<{ record: RecordOut }>(readerB, AS_OF, { id, knownAt: beforeMove });
    expect(then.data?.record, JSON.stringify(then.errors)).toMatchObject({
      namespace: 'acme/a',
      class: 'FACT',
      version: 1,
    });
    expect(await read(readerA, id)).toBeNull();
    expect((await recall(app, readerA, word, 'acme')).items.map((i) => i.record.id)).not.toContain(id);
    expect((await recall(app, readerB, word, 'acme/b')).items.map((i) => i.record.id)).toContain(id);
    // the old namespace's recall does not reach it either, even for the admin
    expect((await recall(app, admin, word, 'acme/a')).items.map((i) => i.record.id)).not.toContain(id);
  });

  it('rolling back a move restores namespace, class and label; a reviewer without the old namespace → FORBIDDEN', async () => {
    const { id, word } = await fresh();
    const r = await app.gql<{ revise: Receipt & { eventIds: string[] } }>(admin, REVISE, {
      input: {
        id,
        expectedVersion: 1,
        namespace: 'acme/b',
        class: 'DECISION',
        sensitivity: 'CONFIDENTIAL',
        reason: 'owned by team b',
        purpose: 'test',
        idempotencyKey: randomUUID(),
      },
    });
    expect(r.data?.revise.outcome, JSON.stringify(r.errors)).toBe('REVISED');
    const [eventId] = r.data!.revise.eventIds;
    const undo = (token: string) =>
      app.gql<{ rollback: { outcome: string; restored: string[] } }>(token, ROLLBACK, {
        input: { eventId, reason: 'moved by mistake', idempotencyKey: randomUUID() },
      });
    // Reviewing acme/b (where it is) is not enough: the rollback moves it back into acme/a.
    const size = await ledgerSize();
    expect(code(await undo(reviewerB))).toBe('FORBIDDEN');
    expect(await ledgerSize()).toBe(size);
    expect(await read(readerB, id)).toMatchObject({ namespace: 'acme/b', version: 2 });

    const ok = await undo(reviewerAB);
    expect(ok.data?.rollback, JSON.stringify(ok.errors)).toMatchObject({ restored: [id] });
    const back = await read(admin, id);
    expect(back).toMatchObject({ namespace: 'acme/a', class: 'FACT', sensitivity: 'INTERNAL', version: 3 });
    expect(await read(readerB, id)).toBeNull();
    expect(await read(readerA, id)).toMatchObject({ id, namespace: 'acme/a' });
    expect((await recall(app, readerA, word, 'acme/a')).items.map((i) => i.record.id)).toContain(id);
  });

  it('rolling a namespace back to T brings back a record moved out of it after T', async () => {
    const { id } = await fresh();
    await new Promise((res) => setTimeout(res, 20));
    const T = new Date().toISOString();
    await new Promise((res) => setTimeout(res, 20));
    const r = await revise(admin, { id, expectedVersion: 1, namespace: 'acme/b', reason: 'tidy' });
    expect(r.data?.revise.outcome, JSON.stringify(r.errors)).toBe('REVISED');
    const back = await app.gql<{ rollback: { outcome: string; restored: string[] } }>(reviewerAB, ROLLBACK, {
      input: { namespace: 'acme/a', to: T, reason: 'undo the tidy-up', idempotencyKey: randomUUID() },
    });
    expect(back.data?.rollback.restored, JSON.stringify(back.errors)).toContain(id);
    expect(await read(admin, id)).toMatchObject({ namespace: 'acme/a', version: 3 });
  });

  it('a move out of a namespace under legal hold → CONFLICT naming the hold; within it, or once released, it moves', async () => {
    const r = await propose(app, admin, { namespace: 'acme/a/held' });
    const id = r.recordId!;
    const placed = await app.gql<{ placeHold: { holdId: string } }>(admin, PLACE, {
      input: { namespace: 'acme/a/held', reason: 'litigation', idempotencyKey: randomUUID() },
    });
    const holdId = placed.data?.placeHold.holdId;
    expect(holdId, JSON.stringify(placed.errors)).toBeTruthy();
    const size = await ledgerSize();
    const out = await revise(admin, { id, expectedVersion: 1, namespace: 'acme/b', reason: 'tidy' });
    expect(code(out)).toBe('CONFLICT');
    expect(out.errors?.[0]?.extensions?.['holds']).toEqual([holdId]);
    expect(await ledgerSize()).toBe(size);
    const within = await revise(admin, {
      id,
      expectedVersion: 1,
      namespace: 'acme/a/held/x',
      reason: 'file',
    });
    expect(within.data?.revise, JSON.stringify(within.errors)).toMatchObject({ outcome: 'REVISED' });
    const released = await app.gql(admin, RELEASE, {
      input: { holdId, reason: 'settled', idempotencyKey: randomUUID() },
    });
    expect(released.errors).toBeUndefined();
    const moved = await revise(admin, { id, expectedVersion: 2, namespace: 'acme/b', reason: 'tidy' });
    expect(moved.data?.revise, JSON.stringify(moved.errors)).toMatchObject({
      outcome: 'REVISED',
      version: 3,
    });
  });

  it('reclassifying as NORMATIVE sends it back to review (QUEUED, CANDIDATE)', async () => {
    const { id } = await fresh();
    const r = await revise(writer, { id, expectedVersion: 1, class: 'NORMATIVE', reason: 'now a rule' });
    expect(r.data?.revise, JSON.stringify(r.errors)).toMatchObject({ outcome: 'QUEUED', version: 2 });
    expect(await read(writer, id)).toMatchObject({ class: 'NORMATIVE', status: 'CANDIDATE' });
  });
});
