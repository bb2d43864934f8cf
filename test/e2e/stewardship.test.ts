import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freshTenant,
  PROPOSE,
  proposal,
  RETRACT,
  startApp,
  type GqlResult,
  type TestApp,
} from '../support/harness.ts';

/*
 * Issue #14, stewardship on the real stack: owners and stewards from grants; the steward checks (run in
 * the projector process with a fake clock 30 days ahead) raise each kind of finding for a seeded
 * situation and none for a clean namespace; a second run raises nothing; a finding that no longer holds
 * is resolved; the scorecard needs the review scope and counts only the caller's tenant and scope.
 */
const nonce = randomBytes(4).toString('hex');
const topic = `muninn.test.steward.${nonce}`;
const A = freshTenant('stew-a');
const B = freshTenant('stew-b');
const DAY = 86_400_000;
const start = Date.now();
let now = new Date(start);
const iso = (days: number) => new Date(start + days * DAY).toISOString();

const FINDINGS = `query F($ns: String!, $status: FindingStatus) { findings(namespace: $ns, status: $status, first: 500) {
  id type severity namespace recordIds entityIds reason status resolveReason dismissed } }`;
const DISMISS = `mutation D($input: DismissFindingInput!) { dismissFinding(input: $input) { outcome } }`;
const SCORECARD = `query S($ns: String!) { scorecard(namespace: $ns) { namespace records live candidates coverage
  freshness contestRate reviewLatencyMs reviewed utility withFeedback openFindings { key count } } }`;
const STEWARDS = `query W($ns: String!) { namespaceStewardship(namespace: $ns) {
  owners { principal role namespace } stewards { principal role namespace } } }`;
const APPROVE = `mutation A($input: ApproveInput!) { approve(input: $input) { outcome recordId version } }`;
const GRANT = `mutation G($input: GrantAccessInput!) { grantAccess(input: $input) { outcome grantId } }`;
const RECALL = `query R($input: RecallInput!) { recall(input: $input) { recallId items { handle record { id } } } }`;
const FEEDBACK = `mutation F($input: FeedbackInput!) { feedback(input: $input) { outcome recordId } }`;

interface Finding {
  id: string;
  type: string;
  severity: string;
  namespace: string;
  recordIds: string[];
  entityIds: string[];
  reason: string;
  status: string;
}

let app: TestApp;
const t: Record<string, string> = {};
const ids: Record<string, string> = {};
const recordsOf: Record<string, string[]> = { [A]: [], [B]: [] };

const ok = <T>(r: GqlResult<T>): T => {
  expect(r.errors).toBeUndefined();
  return r.data!;
};
const ledgerSize = async () =>
  (await app.m.ledger.offsets()).reduce((s, o) => s + BigInt(o.highWatermark), 0n);

async function put(tenant: string, name: string, o: Record<string, unknown>, outcome: string) {
  const token = tenant === A ? t['writerA']! : t['writerB']!;
  const r = ok(
    await app.gql<{ propose: { recordId: string; outcome: string } }>(token, PROPOSE, {
      input: proposal({ namespace: 'acme/dirty', ...o }),
    }),
  );
  expect(r.propose.outcome, name).toBe(outcome);
  ids[name] = r.propose.recordId;
  recordsOf[tenant]!.push(r.propose.recordId);
}

const norm = (text: string) => ({
  class: 'NORMATIVE',
  // Its own subject each: the same (subject, predicate, object) would reinforce the first instead.
  statement: { subject: text.split(' ').slice(0, 4).join(' '), predicate: 'must', object: text, text },
});

async function approve(id: string) {
  const r = ok(
    await app.gql<{ approve: { outcome: string } }>(t['reviewerA']!, APPROVE, {
      input: { proposalId: id, expectedVersion: 1 },
    }),
  );
  expect(r.approve.outcome).toBe('ADMITTED');
}

async function seedA() {
  await put(A, 'stale', { validFrom: iso(-1), validTo: iso(1) }, 'ADMITTED');
  await put(A, 'reviewBy', { ext: { 'muninn:reviewBy': iso(2) } }, 'ADMITTED');
  const cache = `cache-${nonce}`;
  const sessions = (object: string) => ({
    validFrom: iso(-5),
    statement: {
      subject: cache,
      predicate: 'stores sessions in',
      object,
      text: `${cache} stores sessions in ${object}.`,
    },
  });
  await put(A, 'c1', sessions('redis'), 'ADMITTED');
  await put(A, 'c2', sessions('memcached'), 'CONTESTED');
  await put(A, 'orphaned', { about: [{ alias: `ghost-${nonce}`, type: 'service' }] }, 'ADMITTED');
  ok(
    await app.gql(t['writerA']!, RETRACT, {
      input: { id: ids['orphaned'], expectedVersion: 1, reason: 'wrong', idempotencyKey: randomUUID() },
    }),
  );
  // The same fact twice, the second at a higher label: it may not reinforce the first (whose readers could
  // not read its source), so both are stored — near-duplicates only the steward sees as such.
  const fact = {
    subject: `queue-${nonce}`,
    predicate: 'runs on',
    object: 'kafka',
    text: `Queue ${nonce} runs on Kafka.`,
  };
  await put(A, 'n1', { statement: fact }, 'ADMITTED');
  await put(A, 'n2', { statement: fact, sensitivity: 'CONFIDENTIAL' }, 'ADMITTED');
  await put(A, 'approved', norm(`Every deploy of ${nonce} must be reviewed by a second engineer.`), 'QUEUED');
  await approve(ids['approved']!);
  await put(A, 'waiting', norm(`Rollbacks of ${nonce} must be announced in the channel.`), 'QUEUED');
  await put(
    A,
    'zebra',
    {
      statement: {
        subject: `zebra-${nonce}`,
        predicate: 'warms',
        object: 'at dawn',
        text: `Zebra ${nonce} cache warms at dawn.`,
      },
    },
    'ADMITTED',
  );
  const r = ok(
    await app.gql<{ recall: { recallId: string; items: Array<{ handle: string; record: { id: string } }> } }>(
      t['writerA']!,
      RECALL,
      {
        input: {
          query: `zebra ${nonce} cache warms`,
          namespace: 'acme/dirty',
          purpose: 'test',
          recipe: 'bm25',
        },
      },
    ),
  );
  const item = r.recall.items.find((i) => i.record.id === ids['zebra'])!;
  expect(item).toBeDefined();
  ok(
    await app.gql(t['writerA']!, FEEDBACK, {
      input: { recallId: r.recall.recallId, handle: item.handle, verdict: 'WRONG' },
    }),
  );
  await put(
    A,
    'clean',
    { namespace: 'acme/clean', about: [{ alias: `clean-${nonce}`, type: 'service' }] },
    'ADMITTED',
  );
}

const findings = async (token: string, ns: string, status = 'OPEN') =>
  ok(await app.gql<{ findings: Finding[] }>(token, FINDINGS, { ns, status })).findings;
const ofType = (fs: Finding[], type: string) => fs.filter((f) => f.type === type);

beforeAll(async () => {
  app = await startApp(
    {
      MUNINN_LEDGER_TOPIC: topic,
      MUNINN_DLQ_TOPIC: `${topic}.dlq`,
      MUNINN_PROJECTOR_GROUP: `steward-${nonce}`,
      MUNINN_EMBEDDER: 'hashing',
      MUNINN_STEWARD: 'true',
      MUNINN_STEWARD_TENANTS: `${A},${B}`,
      MUNINN_STEWARD_INTERVAL_MS: String(DAY),
      MUNINN_STEWARD_LOW_UTILITY_VOTES: '1',
    },
    undefined,
    { stewardClock: { now: () => now } },
  );
  for (const [name, tenant, scopes] of [
    ['writerA', A, ['read', 'write']],
    ['reviewerA', A, ['read', 'review']],
    ['readerA', A, ['read']],
    ['adminA', A, ['read', 'admin']],
    ['cleanReviewer', A, ['read', 'review']],
    ['writerB', B, ['read', 'write']],
    ['reviewerB', B, ['read', 'review']],
  ] as const)
    t[name] = await app.token({ tenant, sub: name, scopes: [...scopes] });
  await seedA();
  await put(B, 'staleB', { validFrom: iso(-1), validTo: iso(1) }, 'ADMITTED');
  await put(B, 'waitingB', norm(`Tenant B norm ${nonce} must hold.`), 'QUEUED');
  now = new Date(start + 30 * DAY);
  await app.m.steward!.runOnce();
}, 240_000);

afterAll(async () => {
  await app?.stop();
});

describe('steward checks', () => {
  it('each check raises its finding for the seeded situation', async () => {
    const fs = await findings(t['reviewerA']!, 'acme/dirty');
    expect(
      ofType(fs, 'STALE')
        .flatMap((f) => f.recordIds)
        .sort(),
    ).toEqual([ids['stale'], ids['reviewBy']].sort());
    expect(ofType(fs, 'CONTESTED_PAIR').map((f) => f.recordIds)).toEqual([[ids['c1'], ids['c2']].sort()]);
    expect(ofType(fs, 'ORPHAN_ENTITY')).toHaveLength(1);
    expect(ofType(fs, 'NEAR_DUPLICATE').map((f) => f.recordIds)).toContainEqual(
      [ids['n1'], ids['n2']].sort(),
    );
    expect(ofType(fs, 'CANDIDATE_WAITING').map((f) => f.recordIds)).toEqual([[ids['waiting']]]);
    expect(ofType(fs, 'LOW_UTILITY').map((f) => f.recordIds)).toEqual([[ids['zebra']]]);
    for (const f of fs) {
      expect(f.status).toBe('OPEN');
      expect(f.namespace).toBe('acme/dirty');
    }
  });

  it('a clean namespace has no findings', async () => {
    expect(await findings(t['reviewerA']!, 'acme/clean')).toEqual([]);
  });

  it("findings never cross tenants: each tenant's reviewer sees only its own records", async () => {
    const a = await findings(t['reviewerA']!, 'acme');
    const b = await findings(t['reviewerB']!, 'acme');
    for (const f of a) for (const id of f.recordIds) expect(recordsOf[A]).toContain(id);
    expect(b.map((f) => f.type).sort()).toEqual(['CANDIDATE_WAITING', 'STALE']);
    for (const f of b) for (const id of f.recordIds) expect(recordsOf[B]).toContain(id);
  });

  it('a second run raises nothing and appends nothing; the open findings are the same', async () => {
    const before = (await findings(t['reviewerA']!, 'acme')).map((f) => f.id).sort();
    const size = await ledgerSize();
    const p = await app.m.steward!.runOnce();
    expect([p.raised, p.resolved]).toEqual([0, 0]);
    expect(await ledgerSize()).toBe(size);
    const after = (await findings(t['reviewerA']!, 'acme')).map((f) => f.id).sort();
    expect(after).toEqual(before);
    expect(new Set(after).size).toBe(after.length);
  });

  it('a finding that no longer holds is resolved by the next run', async () => {
    ok(
      await app.gql(t['writerA']!, RETRACT, {
        input: { id: ids['stale'], expectedVersion: 1, reason: 'expired', idempotencyKey: randomUUID() },
      }),
    );
    const p = await app.m.steward!.runOnce();
    expect(p.resolved).toBe(1);
    const open = ofType(await findings(t['reviewerA']!, 'acme/dirty'), 'STALE');
    expect(open.map((f) => f.recordIds)).toEqual([[ids['reviewBy']]]);
    const resolved = await findings(t['reviewerA']!, 'acme/dirty', 'RESOLVED');
    expect(resolved.map((f) => [f.type, f.recordIds])).toEqual([['STALE', [ids['stale']]]]);
  });
});

describe('scorecard', () => {
  it('needs the review scope on the namespace', async () => {
    for (const who of ['readerA', 'writerA']) {
      const r = await app.gql(t[who]!, SCORECARD, { ns: 'acme' });
      expect(r.errors?.[0]?.extensions?.['code'], who).toBe('FORBIDDEN');
    }
    // A reviewer whose grant covers only acme/clean gets no scorecard of acme/dirty.
    ok(
      await app.gql(t['adminA']!, GRANT, {
        input: {
          grantee: { sub: 'cleanReviewer' },
          namespace: 'acme/clean',
          maxSensitivity: 'CONFIDENTIAL',
          reason: 'test',
          idempotencyKey: randomUUID(),
        },
      }),
    );
    const denied = await app.gql(t['cleanReviewer']!, SCORECARD, { ns: 'acme/dirty' });
    expect(denied.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
    const clean = ok(
      await app.gql<{ scorecard: { records: number; coverage: number } }>(t['cleanReviewer']!, SCORECARD, {
        ns: 'acme/clean',
      }),
    ).scorecard;
    expect(clean).toMatchObject({ records: 1, coverage: 1 });
  });

  it("counts the tenant's own records only, with the figures of the seeded situation", async () => {
    const s = ok(
      await app.gql<{ scorecard: Record<string, unknown> & { live: number } }>(t['reviewerA']!, SCORECARD, {
        ns: 'acme',
      }),
    ).scorecard;
    // stale and orphaned (both retracted since), reviewBy, c1, c2, n1, n2, approved, waiting, zebra, clean
    expect(s['records']).toBe(recordsOf[A]!.length);
    expect(s['live']).toBe(8);
    expect(s['candidates']).toBe(1);
    expect(s['contestRate']).toBe(0.25);
    expect(s['reviewed']).toBe(1);
    expect(s['withFeedback']).toBe(1);
    expect(s['utility']).toBeLessThan(0);
    expect(s['reviewLatencyMs']).toBeGreaterThan(0);
    const open = Object.fromEntries(
      (s['openFindings'] as Array<{ key: string; count: number }>).map((x) => [x.key, x.count]),
    );
    expect(open).toMatchObject({
      STALE: 1,
      CONTESTED_PAIR: 1,
      ORPHAN_ENTITY: 1,
      CANDIDATE_WAITING: 1,
      LOW_UTILITY: 1,
    });
    const b = ok(
      await app.gql<{ scorecard: { records: number } }>(t['reviewerB']!, SCORECARD, { ns: 'acme' }),
    ).scorecard;
    expect(b.records).toBe(recordsOf[B]!.length);
  });
});

describe('owners and stewards', () => {
  it('are derived from OWNER and STEWARD grants on the namespace or an ancestor', async () => {
    const grant = (sub: string, namespace: string, role: string) =>
      app.gql(t['adminA']!, GRANT, {
        input: {
          grantee: { sub },
          namespace,
          maxSensitivity: 'INTERNAL',
          role,
          reason: 'stewardship',
          idempotencyKey: randomUUID(),
        },
      });
    ok(await grant('olga', 'acme', 'OWNER'));
    ok(await grant('sam', 'acme/dirty', 'STEWARD'));
    ok(await grant('rex', 'acme/dirty', 'READER'));
    const s = ok(
      await app.gql<{
        namespaceStewardship: {
          owners: Array<{ principal: string }>;
          stewards: Array<{ principal: string; role: string; namespace: string }>;
        };
      }>(t['reviewerA']!, STEWARDS, { ns: 'acme/dirty' }),
    ).namespaceStewardship;
    const sub = (p: string) => p.slice(p.indexOf('|') + 1);
    expect(s.owners.map((o) => sub(o.principal))).toEqual(['olga']);
    expect(s.stewards.map((o) => [sub(o.principal), o.role, o.namespace])).toEqual([
      ['sam', 'STEWARD', 'acme/dirty'],
      ['olga', 'OWNER', 'acme'],
    ]);
  });
});

describe('dismissing a finding', () => {
  it('a reviewer dismisses a finding that holds: resolved as dismissed, and the next run does not raise it again', async () => {
    const [orphan] = ofType(await findings(t['reviewerA']!, 'acme/dirty'), 'ORPHAN_ENTITY');
    const dismiss = (token: string, id: string, key = randomUUID()) =>
      app.gql<{ dismissFinding: { outcome: string } }>(token, DISMISS, {
        input: { id, reason: 'kept on purpose', idempotencyKey: key },
      });
    const size = await ledgerSize();
    // Refusals append nothing: no review scope; an unknown finding; another tenant's finding.
    expect((await dismiss(t['writerA']!, orphan!.id)).errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
    expect((await dismiss(t['reviewerA']!, 'no-such-finding')).errors?.[0]?.extensions?.['code']).toBe(
      'NOT_FOUND',
    );
    expect((await dismiss(t['reviewerB']!, orphan!.id)).errors?.[0]?.extensions?.['code']).toBe('NOT_FOUND');
    expect(await ledgerSize()).toBe(size);

    const key = randomUUID();
    expect(ok(await dismiss(t['reviewerA']!, orphan!.id, key)).dismissFinding.outcome).toBe('ADMITTED');
    // The same key again answers with the first receipt; another key finds it already dismissed.
    expect(ok(await dismiss(t['reviewerA']!, orphan!.id, key)).dismissFinding.outcome).toBe('ADMITTED');
    expect((await dismiss(t['reviewerA']!, orphan!.id)).errors?.[0]?.extensions?.['code']).toBe('CONFLICT');
    const all = await findings(t['reviewerA']!, 'acme/dirty', 'ALL');
    expect(all.find((f) => f.id === orphan!.id)).toMatchObject({
      status: 'RESOLVED',
      dismissed: true,
      resolveReason: 'kept on purpose',
    });
    const p = await app.m.steward!.runOnce();
    expect(p.raised).toBe(0);
    expect(ofType(await findings(t['reviewerA']!, 'acme/dirty'), 'ORPHAN_ENTITY')).toEqual([]);
  });
});
