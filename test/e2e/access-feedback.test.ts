import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { receiptKey } from '../../src/domain/commands.ts';
import { freshTenant, PROPOSE, proposal, startApp, type TestApp } from '../support/harness.ts';

/** Namespace grants (ledger events) narrow what a caller reads; recall feedback moves ranking. */
const GRANT = `mutation G($input: GrantAccessInput!) { grantAccess(input: $input) { outcome grantId reason } }`;
const REVOKE = `mutation V($input: RevokeAccessInput!) { revokeAccess(input: $input) { outcome grantId reason } }`;
const FEEDBACK = `mutation F($input: FeedbackInput!) { feedback(input: $input) { outcome recordId reason } }`;
const RECALL = `query R($input: RecallInput!) { recall(input: $input) {
  recallId items { handle score record { id namespace utility } why { signals } } } }`;
const LIST = `query L($f: RecordFilter!) { records(filter: $f, first: 500) { totalCount nodes { id namespace sensitivity } } }`;

type RecallOut = {
  recallId: string;
  items: Array<{ handle: string; score: number; record: { id: string; namespace: string; utility: number } }>;
};

let app: TestApp;
let tenant: string;
let admin: string;
const ISS = () => app.config.auth.issuer;
const ids: Record<string, string> = {};

async function put(name: string, o: Record<string, unknown>): Promise<void> {
  const r = await app.gql<{ propose: { recordId: string; outcome: string } }>(admin, PROPOSE, {
    input: proposal(o),
  });
  expect(r.errors, name).toBeUndefined();
  ids[name] = r.data!.propose.recordId;
}
const statement = (subject: string, text: string) => ({ subject, predicate: 'notes', object: 'x', text });

async function grant(sub: string, namespace: string, maxSensitivity: string, purposes?: string[]) {
  const r = await app.gql<{ grantAccess: { outcome: string; grantId: string } }>(admin, GRANT, {
    input: {
      grantee: { sub },
      namespace,
      maxSensitivity,
      ...(purposes ? { purposes } : {}),
      reason: 'test',
      idempotencyKey: `g-${sub}-${namespace}-${maxSensitivity}-${purposes?.join(',') ?? '*'}`,
    },
  });
  expect(r.errors).toBeUndefined();
  expect(r.data!.grantAccess.outcome).toBe('ADMITTED');
  return r.data!.grantAccess.grantId;
}

const recall = async (token: string, input: Record<string, unknown>) => {
  const r = await app.gql<{ recall: RecallOut }>(token, RECALL, {
    input: { namespace: 'acme', purpose: 'code-change', recipe: 'bm25', ...input },
  });
  expect(r.errors).toBeUndefined();
  return r.data!.recall;
};
const list = async (token: string, namespace = 'acme') => {
  const r = await app.gql<{
    records: { totalCount: number; nodes: Array<{ id: string; namespace: string }> };
  }>(token, LIST, { f: { namespace } });
  expect(r.errors).toBeUndefined();
  return r.data!.records;
};

beforeAll(async () => {
  app = await startApp();
  tenant = freshTenant('access');
  admin = await app.token({ tenant, sub: 'root', scopes: ['admin'] });
  await put('a-public', {
    namespace: 'acme/a',
    sensitivity: 'PUBLIC',
    statement: statement('deploy-a', 'Deploys of service alpha run through the canary pipeline.'),
  });
  await put('a-conf', {
    namespace: 'acme/a',
    sensitivity: 'CONFIDENTIAL',
    statement: statement(
      'keys-a',
      'Service alpha rotates its signing keys through the canary pipeline monthly.',
    ),
  });
  await put('ax-internal', {
    namespace: 'acme/a/x',
    sensitivity: 'INTERNAL',
    statement: statement('deploy-ax', 'The x worker of alpha skips the canary pipeline on hotfixes.'),
  });
  await put('b-internal', {
    namespace: 'acme/b',
    sensitivity: 'INTERNAL',
    statement: statement('deploy-b', 'Service beta deploys through the canary pipeline at noon.'),
  });
});
afterAll(async () => app?.stop());

describe('namespace grants', () => {
  it('a member without grants reads the tenant up to CONFIDENTIAL (the default)', async () => {
    const t = await app.token({ tenant, sub: 'member' });
    const l = await list(t);
    expect(l.nodes.map((n) => n.id).sort()).toEqual(
      [ids['a-public'], ids['a-conf'], ids['ax-internal'], ids['b-internal']].sort(),
    );
    expect(l.totalCount).toBe(4);
  });

  it('a grant narrows: alice (acme/a up to INTERNAL) sees only acme/a records at or below INTERNAL, in records, counts and recall', async () => {
    await grant('alice', 'acme/a', 'INTERNAL');
    const t = await app.token({ tenant, sub: 'alice' });
    const l = await list(t);
    expect(l.nodes.map((n) => n.id).sort()).toEqual([ids['a-public'], ids['ax-internal']].sort());
    expect(l.totalCount).toBe(2);
    const r = await recall(t, { query: 'canary pipeline deploys' });
    const got = r.items.map((i) => i.record.id);
    expect(got.length).toBeGreaterThan(0);
    for (const id of got) expect([ids['a-public'], ids['ax-internal']]).toContain(id);
  });

  it('a purpose-bound grant applies only to that purpose; structured reads without a purpose do not use it', async () => {
    await grant('bob', 'acme/b', 'CONFIDENTIAL', ['incident']);
    const t = await app.token({ tenant, sub: 'bob' });
    const incident = await recall(t, { query: 'canary pipeline', purpose: 'incident' });
    expect(incident.items.map((i) => i.record.id)).toEqual([ids['b-internal']]);
    const other = await recall(t, { query: 'canary pipeline', purpose: 'code-change' });
    expect(other.items).toEqual([]);
    expect((await list(t)).totalCount).toBe(0);
  });

  it('feedback on an item recalled under a purpose-bound grant is accepted under that purpose only', async () => {
    await grant('bob', 'acme/b', 'CONFIDENTIAL', ['incident']);
    const t = await app.token({ tenant, sub: 'bob', scopes: ['read', 'write'] });
    const r = await recall(t, { query: 'canary pipeline', purpose: 'incident' });
    const item = r.items[0]!;
    const send = (purpose?: string) =>
      app.gql<{ feedback: { outcome: string; recordId: string } }>(t, FEEDBACK, {
        input: {
          recallId: r.recallId,
          handle: item.handle,
          verdict: 'USED',
          ...(purpose ? { purpose } : {}),
        },
      });
    // Without the purpose the grant does not apply: the record is not found (nothing is appended).
    expect((await send()).errors?.[0]?.extensions?.['code']).toBe('NOT_FOUND');
    const ok = await send('incident');
    expect(ok.errors).toBeUndefined();
    expect(ok.data!.feedback.recordId).toBe(item.record.id);
  });

  it("an agent's grant intersects with its principal's: carol (default) via bot-1 (acme/a/x) sees only acme/a/x", async () => {
    await grant('bot-1', 'acme/a/x', 'RESTRICTED');
    const t = await app.token({ tenant, sub: 'carol', act: { sub: 'bot-1', iss: ISS() } });
    const l = await list(t);
    expect(l.nodes.map((n) => n.id)).toEqual([ids['ax-internal']]);
    // carol herself, without the agent, keeps the tenant default
    expect((await list(await app.token({ tenant, sub: 'carol' }))).totalCount).toBe(4);
  });

  it('revoking the only grant leaves a member with nothing (not the default); only admins grant, revoke and list', async () => {
    const gid = await grant('erin', 'acme/b', 'PUBLIC');
    const erin = await app.token({ tenant, sub: 'erin' });
    expect((await list(erin)).totalCount).toBe(0);
    const v = await app.gql<{ revokeAccess: { outcome: string } }>(admin, REVOKE, {
      input: { grantId: gid, reason: 'left the team' },
    });
    expect(v.errors).toBeUndefined();
    expect(v.data!.revokeAccess.outcome).toBe('ADMITTED');
    // issue #9: once granted, an identity never falls back to the tenant default
    expect((await list(erin)).totalCount).toBe(0);
    const denied = await app.gql(erin, GRANT, {
      input: {
        grantee: { sub: 'erin' },
        namespace: 'acme',
        maxSensitivity: 'RESTRICTED',
        reason: 'x',
        idempotencyKey: 'k1',
      },
    });
    expect(denied.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
    const listed = await app.gql(erin, '{ grants { id } }');
    expect(listed.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
    const all = await app.gql<{ grants: Array<{ id: string; revokedAt: string | null }> }>(
      admin,
      '{ grants { id grantee namespace revokedAt } }',
    );
    expect(all.data!.grants.find((g) => g.id === gid)?.revokedAt).toBeTruthy();
  });

  it('a writer whose grant was revoked is FORBIDDEN to repeat its proposal or reuse its key: no receipt is shown', async () => {
    const gid = await grant('frank', 'acme/f', 'RESTRICTED');
    const frank = await app.token({ tenant, sub: 'frank', scopes: ['read', 'write'] });
    const input = proposal({ namespace: 'acme/f', await: true });
    const first = await app.gql<{ propose: { outcome: string } }>(frank, PROPOSE, { input });
    expect(first.errors).toBeUndefined();
    expect(first.data!.propose.outcome).toBe('ADMITTED');
    const v = await app.gql(admin, REVOKE, { input: { grantId: gid, reason: 'left the team' } });
    expect(v.errors).toBeUndefined();
    const repeat = await app.gql(frank, PROPOSE, { input });
    expect(repeat.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
    const other = proposal({ namespace: 'acme/f', idempotencyKey: input['idempotencyKey'] });
    const reused = await app.gql(frank, PROPOSE, { input: other });
    expect(reused.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
  });

  it('writing outside every grant is FORBIDDEN and appends nothing', async () => {
    const t = await app.token({ tenant, sub: 'alice', scopes: ['read', 'write'] });
    const key = `outside-${Date.now()}`;
    const r = await app.gql(t, PROPOSE, { input: proposal({ namespace: 'acme/b', idempotencyKey: key }) });
    expect(r.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
    // nothing reached the ledger: no receipt for the key, and acme/b holds only what it held
    expect(await app.m.store.receipt(tenant, receiptKey({ iss: ISS(), sub: 'alice' }, key))).toBeUndefined();
    expect((await list(admin, 'acme/b')).totalCount).toBe(1);
    const ok = await app.gql(t, PROPOSE, { input: proposal({ namespace: 'acme/a/new' }) });
    expect(ok.errors).toBeUndefined();
  });
});

describe('recall feedback', () => {
  it('USED raises and WRONG lowers a record’s utility, and the ranking follows', async () => {
    const t = await app.token({ tenant, sub: 'member', scopes: ['read', 'write'] });
    // Two records equally relevant to the query.
    await put('twin-1', {
      namespace: 'acme/c',
      statement: statement('twin-1', 'Zebra cache warms at dawn.'),
    });
    await put('twin-2', {
      namespace: 'acme/c',
      statement: statement('twin-2', 'Zebra cache warms at dusk.'),
    });
    const before = await recall(t, { namespace: 'acme/c', query: 'zebra cache warms' });
    const order = before.items.map((i) => i.record.id);
    expect(order.sort()).toEqual([ids['twin-1'], ids['twin-2']].sort());
    const [first, second] = before.items;
    for (const [item, verdict] of [
      [first!, 'WRONG'],
      [second!, 'USED'],
    ] as const) {
      const f = await app.gql<{ feedback: { outcome: string; recordId: string } }>(t, FEEDBACK, {
        input: { recallId: before.recallId, handle: item.handle, verdict },
      });
      expect(f.errors).toBeUndefined();
      expect(f.data!.feedback.recordId).toBe(item.record.id);
    }
    const after = await recall(t, { namespace: 'acme/c', query: 'zebra cache warms' });
    expect(after.items.map((i) => i.record.id)).toEqual([second!.record.id, first!.record.id]);
    const util = Object.fromEntries(after.items.map((i) => [i.record.id, i.record.utility]));
    expect(util[second!.record.id]).toBeGreaterThan(0);
    expect(util[first!.record.id]).toBeLessThan(0);
  });

  it('the same verdict twice counts once; another verdict on the same item is CONFLICT; a forged or foreign handle is NOT_FOUND', async () => {
    const t = await app.token({ tenant, sub: 'member', scopes: ['read', 'write'] });
    const r = await recall(t, { namespace: 'acme/c', query: 'zebra cache' });
    const item = r.items[0]!;
    const send = (verdict: string, handle = item.handle, recallId = r.recallId) =>
      app.gql<{ feedback: { outcome: string } }>(t, FEEDBACK, { input: { recallId, handle, verdict } });
    const one = await send('USED');
    const two = await send('USED');
    expect(one.errors).toBeUndefined();
    expect(two.data).toEqual(one.data);
    const changed = await send('WRONG');
    expect(changed.errors?.[0]?.extensions?.['code']).toBe('CONFLICT');
    const forged = await send(
      'USED',
      item.handle.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
    );
    expect(forged.errors?.[0]?.extensions?.['code']).toBe('NOT_FOUND');
    const foreign = await send('USED', item.handle, '00000000-0000-4000-8000-000000000000');
    expect(foreign.errors?.[0]?.extensions?.['code']).toBe('NOT_FOUND');
    // a caller who cannot see the record cannot vote on it, even with a valid handle
    const alice = await app.token({ tenant, sub: 'alice', scopes: ['read', 'write'] });
    const hidden = await app.gql(alice, FEEDBACK, {
      input: { recallId: r.recallId, handle: item.handle, verdict: 'USED' },
    });
    expect(hidden.errors?.[0]?.extensions?.['code']).toBe('NOT_FOUND');
  });
});
