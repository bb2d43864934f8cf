import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freshTenant,
  PROPOSE,
  proposal,
  REVISE,
  RETRACT,
  startApp,
  type TestApp,
} from '../support/harness.ts';

const RECORD = `query Q($id: ID!, $asOf: AsOf) { record(id: $id, asOf: $asOf) { id version status validFrom validTo recordedAt retiredAt statement { text } about { name type } } }`;
const HISTORY = `query H($id: ID!) { history(id: $id) { version status validFrom validTo recordedAt retiredAt statement { text } reason } }`;

type Rec = {
  id: string;
  version: number;
  status: string;
  validFrom: string;
  validTo: string | null;
  recordedAt: string;
  retiredAt: string | null;
  statement: { text: string };
};
type Receipt = { outcome: string; recordId: string; version: number; eventIds: string[] };

let app: TestApp;
let token: string;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  app = await startApp();
  token = await app.token({ tenant: freshTenant() });
});
afterAll(() => app?.stop());

describe('propose → read now', () => {
  it('an awaited proposal is readable at once, with its entity', async () => {
    const p = await app.gql<{ propose: Receipt }>(token, PROPOSE, {
      input: proposal({
        about: [{ alias: 'payments-api', type: 'service' }],
        statement: {
          subject: 'payments-api',
          predicate: 'uses',
          object: 'postgres',
          text: 'The payments API uses Postgres.',
        },
      }),
    });
    expect(p.errors).toBeUndefined();
    expect(p.data?.propose.outcome).toBe('ADMITTED');
    expect(p.data?.propose.version).toBe(1);
    const r = await app.gql<{ record: Rec & { about: Array<{ name: string }> } }>(token, RECORD, {
      id: p.data!.propose.recordId,
    });
    expect(r.data?.record).toMatchObject({
      version: 1,
      status: 'ACTIVE',
      statement: { text: 'The payments API uses Postgres.' },
    });
    expect(r.data?.record.about.map((e) => e.name)).toEqual(['payments-api']);
  });
});

describe('bi-temporal revisions', () => {
  let id: string;
  let revs: Rec[];

  beforeAll(async () => {
    const p = await app.gql<{ propose: Receipt }>(token, PROPOSE, {
      input: proposal({
        validFrom: '2024-01-01T00:00:00Z',
        statement: { subject: 'api', predicate: 'timeout', object: '30s', text: 'v1' },
      }),
    });
    id = p.data!.propose.recordId;
    await sleep(20);
    const r2 = await app.gql<{ revise: Receipt }>(token, REVISE, {
      input: {
        id,
        expectedVersion: 1,
        statement: { subject: 'api', predicate: 'timeout', object: '45s', text: 'v2' },
        purpose: 'test',
        idempotencyKey: `${id}-2`,
      },
    });
    expect(r2.errors).toBeUndefined();
    await sleep(20);
    const r3 = await app.gql<{ revise: Receipt }>(token, REVISE, {
      input: {
        id,
        expectedVersion: 2,
        validTo: '2025-01-01T00:00:00Z',
        purpose: 'test',
        idempotencyKey: `${id}-3`,
      },
    });
    expect(r3.errors).toBeUndefined();
    revs = (await app.gql<{ history: Rec[] }>(token, HISTORY, { id })).data!.history;
  });

  it('revise twice → three revisions with contiguous system-time intervals', () => {
    expect(revs.map((r) => r.version)).toEqual([1, 2, 3]);
    expect(revs.map((r) => r.statement.text)).toEqual(['v1', 'v2', 'v2']);
    expect(revs[0]!.retiredAt).toBe(revs[1]!.recordedAt);
    expect(revs[1]!.retiredAt).toBe(revs[2]!.recordedAt);
    expect(revs[2]!.retiredAt).toBeNull();
    expect(revs[2]!.validTo).toBe('2025-01-01T00:00:00.000Z');
    expect(revs[0]!.recordedAt < revs[1]!.recordedAt && revs[1]!.recordedAt < revs[2]!.recordedAt).toBe(true);
  });

  it('each (validAt, knownAt) point returns the right revision', async () => {
    const t = (s: string, deltaMs: number) => new Date(new Date(s).getTime() + deltaMs).toISOString();
    const [s1, s2, s3] = revs.map((r) => r.recordedAt) as [string, string, string];
    const mid = (a: string, b: string) =>
      new Date((new Date(a).getTime() + new Date(b).getTime()) / 2).toISOString();
    const table: Array<[string | undefined, string | undefined, number | null, string]> = [
      [undefined, undefined, 3, 'now'],
      ['2024-06-01T00:00:00Z', undefined, 3, 'valid mid-2024, as known now'],
      ['2025-06-01T00:00:00Z', undefined, null, 'after validTo, as known now'],
      ['2023-06-01T00:00:00Z', undefined, null, 'before validFrom'],
      ['2024-06-01T00:00:00Z', t(s1, -1), null, 'before it was recorded'],
      ['2024-06-01T00:00:00Z', s1, 1, 'at the first recording'],
      ['2024-06-01T00:00:00Z', mid(s1, s2), 1, 'between first and second revision'],
      ['2024-06-01T00:00:00Z', s2, 2, 'at the second revision'],
      ['2025-06-01T00:00:00Z', mid(s2, s3), 2, 'believed open-ended before the third revision'],
      ['2025-06-01T00:00:00Z', s3, null, 'closed by the third revision'],
      [undefined, mid(s1, s2), 1, 'system time only'],
      ['2024-01-01T00:00:00Z', undefined, 3, 'validFrom is inclusive'],
      ['2025-01-01T00:00:00Z', undefined, null, 'validTo is exclusive'],
    ];
    for (const [validAt, knownAt, version, label] of table) {
      const asOf = validAt || knownAt ? { validAt, knownAt } : undefined;
      const r = await app.gql<{ record: Rec | null }>(token, RECORD, { id, asOf });
      expect(r.errors, label).toBeUndefined();
      expect(r.data?.record?.version ?? null, label).toBe(version);
    }
  });

  it('a stale expectedVersion is refused with CONFLICT and writes nothing', async () => {
    const r = await app.gql(token, REVISE, {
      input: {
        id,
        expectedVersion: 1,
        validFrom: '2024-02-01T00:00:00Z',
        purpose: 'test',
        idempotencyKey: `${id}-stale`,
      },
    });
    expect(r.errors?.[0]?.extensions?.['code']).toBe('CONFLICT');
    expect(r.errors?.[0]?.extensions?.['currentVersion']).toBe(3);
    const h = await app.gql<{ history: Rec[] }>(token, HISTORY, { id });
    expect(h.data?.history).toHaveLength(3);
  });
});

describe('retraction hides and keeps', () => {
  it('a retracted record leaves the listing, keeps its history and is still readable by id', async () => {
    const ns = `acme/retract-${Date.now()}`;
    const p = await app.gql<{ propose: Receipt }>(token, PROPOSE, { input: proposal({ namespace: ns }) });
    const id = p.data!.propose.recordId;
    const x = await app.gql<{ retract: Receipt }>(token, RETRACT, {
      input: { id, expectedVersion: 1, reason: 'wrong', idempotencyKey: `${id}-x` },
    });
    expect(x.errors).toBeUndefined();
    expect(x.data?.retract).toMatchObject({ outcome: 'RETRACTED', version: 2 });
    const list = await app.gql<{ records: { nodes: Rec[] } }>(
      token,
      `query { records(filter: { namespace: "${ns}" }) { nodes { id } } }`,
    );
    expect(list.errors).toBeUndefined();
    expect(list.data?.records.nodes).toEqual([]);
    const withRetracted = await app.gql<{ records: { nodes: Rec[] } }>(
      token,
      `query { records(filter: { namespace: "${ns}", statuses: [RETRACTED] }) { nodes { id status } } }`,
    );
    expect(withRetracted.data?.records.nodes).toEqual([{ id, status: 'RETRACTED' }]);
    const h = await app.gql<{ history: Array<Rec & { reason: string | null }> }>(token, HISTORY, { id });
    expect(h.data?.history.map((v) => [v.status, v.reason])).toEqual([
      ['ACTIVE', null],
      ['RETRACTED', 'wrong'],
    ]);
  });
});

describe('idempotency', () => {
  it('same key twice → one record and the same receipt', async () => {
    const input = proposal();
    const a = await app.gql<{ propose: Receipt }>(token, PROPOSE, { input });
    const b = await app.gql<{ propose: Receipt }>(token, PROPOSE, { input });
    expect(b.data?.propose.recordId).toBe(a.data?.propose.recordId);
    expect(b.data?.propose.outcome).toBe(a.data?.propose.outcome);
    expect(b.data?.propose.eventIds.at(-1)).toBe(a.data?.propose.eventIds.at(-1));
  });

  it('same key with another payload → CONFLICT', async () => {
    const input = proposal();
    await app.gql(token, PROPOSE, { input });
    const b = await app.gql(token, PROPOSE, {
      input: { ...input, statement: { subject: 's', predicate: 'p', object: 'o', text: 'other' } },
    });
    expect(b.errors?.[0]?.extensions?.['code']).toBe('CONFLICT');
  });

  it('the same key raced by two writers before either is projected → one record, and a CONFLICT for the other payload', async () => {
    const key = `race-${Date.now()}`;
    const a = proposal({ idempotencyKey: key });
    const b = proposal({
      idempotencyKey: key,
      statement: { subject: 's', predicate: 'p', object: 'o', text: 'other' },
    });
    const [ra, rb] = await Promise.all([
      app.gql<{ propose: Receipt }>(token, PROPOSE, { input: a }),
      app.gql<{ propose: Receipt }>(token, PROPOSE, { input: b }),
    ]);
    const codes = [ra, rb]
      .map((r) => (r.errors ? r.errors[0]!.extensions!['code'] : r.data!.propose.outcome))
      .sort();
    expect(codes).toEqual(['ADMITTED', 'CONFLICT']);
  });
});
