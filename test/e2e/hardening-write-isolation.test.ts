import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/canonical.ts';
import { receiptKey } from '../../src/domain/commands.ts';
import { utilityOf } from '../../src/domain/fold.ts';
import { freshTenant, PROPOSE, proposal, REVISE, startApp, type TestApp } from '../support/harness.ts';
import {
  approve,
  AWAIT,
  code,
  FEEDBACK,
  GRANT,
  norm,
  propose,
  recall,
  record,
  REVOKE,
  who as whoOf,
  type Receipt,
} from '../support/write-attacks.ts';

/**
 * Issue #9, findings 2-4, end to end on the real stack: what a hostile tenant member tried with
 * idempotency receipts, predictable default keys and feedback handles. Each case asserts the attempt is
 * now refused or harmless, and that a refused attempt wrote nothing (no receipt under the attacker's
 * key, versions and utility as they were).
 *
 *  2. idempotency receipts replayed across principals
 *  3. predictable default keys pre-empting approve and revokeAccess
 *  4. feedback handles used by another caller, and one caller voting a record down repeatedly
 */

let app: TestApp;
const who = (sub: string) => whoOf(app, sub);

beforeAll(async () => {
  app = await startApp(AWAIT);
});
afterAll(async () => app?.stop());

// ─────────────────────────────────────────────────────────────────────────────────────────────────────────
describe('2. idempotency receipts belong to their writer', () => {
  let tenant: string;
  let admin: string;
  const secretText = 'The vault master key rotates on the first Monday of each month.';
  let hiddenId: string;

  beforeAll(async () => {
    tenant = freshTenant('rcpt');
    admin = await app.token({ tenant, sub: 'root', scopes: ['admin'] });
    const subject = `vault-${randomUUID().slice(0, 6)}`;
    const hidden = await propose(app, admin, {
      namespace: 'acme/sec',
      sensitivity: 'RESTRICTED',
      statement: { subject, predicate: 'rotates on', object: 'first Monday', text: secretText },
    });
    hiddenId = hidden.recordId!;
    const a = await approve(app, admin, { proposalId: hiddenId, expectedVersion: 1 });
    expect(a.data?.approve.outcome).toBe('ADMITTED');
  });

  it("replaying an admin's exact propose (input and key) gives the replayer her own receipt, never the admin's; no receipt quotes another record's text", async () => {
    // the admin contradicts the RESTRICTED record with an INTERNAL one: CONTESTED, the reason names the
    // other record by id only (it used to quote its text)
    const hidden = await app.gql<{ record: { statement: { subject: string } } }>(
      admin,
      'query R($id: ID!) { record(id: $id) { statement { subject } } }',
      { id: hiddenId },
    );
    const contra = proposal({
      namespace: 'acme/sec',
      statement: {
        subject: hidden.data!.record.statement.subject,
        predicate: 'rotates on',
        object: 'last Friday',
        text: 'The vault master key rotates on the last Friday.',
      },
      idempotencyKey: `k-${randomUUID()}`,
    });
    const mine = await app.gql<{ propose: Receipt }>(admin, PROPOSE, { input: contra });
    expect(mine.errors).toBeUndefined();
    expect(mine.data!.propose.outcome).toBe('CONTESTED');
    expect(mine.data!.propose.reason).toContain(hiddenId);
    expect(mine.data!.propose.reason).not.toContain('first Monday');

    // eve (who may not read RESTRICTED) replays input and key: her own write (a repeat of the admin's
    // INTERNAL record, which she may see), not the admin's receipt naming the hidden record
    const eve = await app.token({ tenant, sub: 'eve', scopes: ['read', 'write'] });
    const replay = await app.gql<{ propose: Receipt }>(eve, PROPOSE, { input: contra });
    expect(replay.errors).toBeUndefined();
    const got = replay.data!.propose;
    expect(got.outcome).toBe('REINFORCED');
    expect(got.reason ?? '').not.toContain(hiddenId);
    expect(got.reason ?? '').not.toContain('first Monday');
    // the admin's own retry still gets the admin's receipt
    const retry = await app.gql<{ propose: Receipt }>(admin, PROPOSE, { input: contra });
    const { position: _p, ...first } = mine.data!.propose as Receipt & { position: unknown };
    expect(retry.data!.propose).toMatchObject(first);
  });

  it("a token with no scopes replaying an admin's revise → FORBIDDEN, no record id or version, nothing appended", async () => {
    const rec = await propose(app, admin, { namespace: 'acme/sec' });
    const input = {
      id: rec.recordId,
      expectedVersion: 1,
      statement: { subject: 'x', predicate: 'is', object: 'y', text: 'Revised by the admin.' },
      purpose: 'fix',
      idempotencyKey: `rev-${randomUUID()}`,
    };
    const done = await app.gql<{ revise: Receipt }>(admin, REVISE, { input });
    expect(done.data!.revise).toMatchObject({ outcome: 'REVISED', version: 2 });

    const nobody = await app.token({ tenant, sub: 'nobody', scopes: [] });
    const r = await app.gql<{ revise: Receipt }>(nobody, REVISE, { input });
    expect(code(r)).toBe('FORBIDDEN');
    expect(r.data?.revise ?? null).toBeNull();
    expect(JSON.stringify(r.errors)).not.toContain(rec.recordId!);
    expect(
      await app.m.store.receipt(tenant, receiptKey(who('nobody'), input.idempotencyKey)),
    ).toBeUndefined();
    expect((await record(app, admin, rec.recordId!)).version).toBe(2);

    // a writer who cannot see the record gets NOT_FOUND for the same replay, and nothing is appended
    const eve = await app.token({ tenant, sub: 'eve', scopes: ['read', 'write'] });
    const hiddenVersion = (await record(app, admin, hiddenId)).version;
    const hiddenInput = { ...input, id: hiddenId, expectedVersion: hiddenVersion };
    const r2 = await app.gql<{ revise: Receipt }>(eve, REVISE, { input: hiddenInput });
    expect(code(r2)).toBe('NOT_FOUND');
    expect(await app.m.store.receipt(tenant, receiptKey(who('eve'), input.idempotencyKey))).toBeUndefined();
    expect((await record(app, admin, hiddenId)).version).toBe(hiddenVersion);
    // the admin's own retry is still idempotent
    const again = await app.gql<{ revise: Receipt }>(admin, REVISE, { input });
    expect(again.data!.revise).toMatchObject({ outcome: 'REVISED', version: 2 });
  });
});

// ─────────────────────────────────────────────────────────────────────────────────────────────────────────
describe('3. default keys cannot be pre-empted', () => {
  it("a writer using approve:<id>:v1 and reject:<id>:v1 as her own keys does not block the reviewer's approve", async () => {
    const tenant = freshTenant('keys');
    const alice = await app.token({ tenant, sub: 'alice', scopes: ['read', 'write'] });
    const mallory = await app.token({ tenant, sub: 'mallory', scopes: ['read', 'write'] });
    const rev = await app.token({ tenant, sub: 'rev-1', scopes: ['read', 'review'] });
    const id = (await propose(app, alice, norm('All releases must be signed with the sprocket key.')))
      .recordId!;
    for (const key of [`approve:${id}:v1`, `reject:${id}:v1`])
      expect((await propose(app, mallory, { namespace: 'acme/x', idempotencyKey: key })).outcome).toBe(
        'ADMITTED',
      );
    const r = await approve(app, rev, { proposalId: id, expectedVersion: 1 });
    expect(r.errors).toBeUndefined();
    expect(r.data!.approve.outcome).toBe('ADMITTED');
  });

  it("a writer using revoke:<grantId> (and the admin's grant key) as her own keys does not block grantAccess or revokeAccess", async () => {
    const tenant = freshTenant('keys');
    const admin = await app.token({ tenant, sub: 'root', scopes: ['admin'] });
    const mallory = await app.token({ tenant, sub: 'mallory', scopes: ['read', 'write'] });
    const grantKey = `grant-mallory-${randomUUID().slice(0, 6)}`;
    expect((await propose(app, mallory, { namespace: 'acme/x', idempotencyKey: grantKey })).outcome).toBe(
      'ADMITTED',
    );
    const g = await app.gql<{ grantAccess: { outcome: string; grantId: string } }>(admin, GRANT, {
      input: {
        grantee: { sub: 'mallory' },
        namespace: 'acme/x',
        maxSensitivity: 'INTERNAL',
        reason: 't',
        idempotencyKey: grantKey,
      },
    });
    expect(g.errors).toBeUndefined();
    expect(g.data!.grantAccess.outcome).toBe('ADMITTED');
    const grantId = g.data!.grantAccess.grantId;
    expect(
      (await propose(app, mallory, { namespace: 'acme/x', idempotencyKey: `revoke:${grantId}` })).outcome,
    ).toBe('ADMITTED');
    const v = await app.gql<{ revokeAccess: { outcome: string } }>(admin, REVOKE, {
      input: { grantId, reason: 'done' },
    });
    expect(v.errors).toBeUndefined();
    expect(v.data!.revokeAccess.outcome).toBe('ADMITTED');
  });
});

// ─────────────────────────────────────────────────────────────────────────────────────────────────────────
describe('4. feedback handles are bound to the caller; one caller counts once per record', () => {
  let tenant: string;
  let admin: string;

  beforeAll(async () => {
    tenant = freshTenant('fb');
    admin = await app.token({ tenant, sub: 'root', scopes: ['admin'] });
  });

  /** A record of its own (so the tests' votes do not mix), and how to read its utility. */
  async function target(word: string) {
    const id = (
      await propose(app, admin, {
        namespace: 'acme/fb',
        statement: {
          subject: `${word} queue`,
          predicate: 'drains',
          object: 'nightly',
          text: `The ${word} queue drains nightly.`,
        },
      })
    ).recordId!;
    const query = `${word} queue drains`;
    const itemFor = async (token: string) => {
      const r = await recall(app, token, query, 'acme/fb');
      return { recallId: r.recallId, item: r.items.find((i) => i.record.id === id)! };
    };
    const utility = async () => (await itemFor(admin)).item.record.utility;
    return { id, itemFor, utility };
  }

  const feedbackKey = (recallId: string, id: string) =>
    `feedback:${sha256Hex(`${recallId}\u0000${id}`).slice(0, 40)}`;

  it("another member's handle (with its recall id) is NOT_FOUND for me, and nothing is appended", async () => {
    const t = await target('wombat');
    const a = await app.token({ tenant, sub: 'member-a' });
    const b = await app.token({ tenant, sub: 'member-b' });
    const { recallId, item } = await t.itemFor(a);
    const f = await app.gql(b, FEEDBACK, { input: { recallId, handle: item.handle, verdict: 'WRONG' } });
    expect(code(f)).toBe('NOT_FOUND');
    expect(await t.utility()).toBe(0);
    const key = feedbackKey(recallId, t.id);
    expect(await app.m.store.receipt(tenant, receiptKey(who('member-b'), key, 'derived'))).toBeUndefined();
    // while A's own handle works for A
    const own = await app.gql(a, FEEDBACK, { input: { recallId, handle: item.handle, verdict: 'USED' } });
    expect(own.errors).toBeUndefined();
    expect(await app.m.store.receipt(tenant, receiptKey(who('member-a'), key, 'derived'))).toBeDefined();
  });

  it('one member sending WRONG from five recalls counts once: the utility of one WRONG, not -1; a later USED replaces it', async () => {
    const t = await target('numbat');
    const m = await app.token({ tenant, sub: 'member-c' });
    for (let i = 0; i < 5; i++) {
      const { recallId, item } = await t.itemFor(m);
      const f = await app.gql(m, FEEDBACK, { input: { recallId, handle: item.handle, verdict: 'WRONG' } });
      expect(f.errors).toBeUndefined();
    }
    const one = utilityOf({ used: 0, ignored: 0, wrong: 1 });
    expect(one).toBeGreaterThan(-1);
    expect(await t.utility()).toBe(one);
    const { recallId, item } = await t.itemFor(m);
    const f = await app.gql(m, FEEDBACK, { input: { recallId, handle: item.handle, verdict: 'USED' } });
    expect(f.errors).toBeUndefined();
    expect(await t.utility()).toBe(utilityOf({ used: 1, ignored: 0, wrong: 0 }));
  });
});
