import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freshTenant,
  PROPOSE,
  proposal,
  REVISE,
  startApp,
  type GqlResult,
  type TestApp,
} from '../support/harness.ts';

const RECORD = `query Q($id: ID!) { record(id: $id) { id version status statement { text } } }`;
const HISTORY = `query H($id: ID!) { history(id: $id) { version status retiredAt statement { text } } }`;

type Receipt = {
  outcome: string;
  recordId: string;
  version: number | null;
  reason: string | null;
  eventIds: string[];
  position: string | null;
};
type Rec = { id: string; version: number; status: string; statement: { text: string } };

let app: TestApp;
let token: string;

beforeAll(async () => {
  app = await startApp();
  token = await app.token({ tenant: freshTenant('conc') });
});
afterAll(() => app?.stop());

const codeOf = (r: GqlResult<unknown>): unknown => r.errors?.[0]?.extensions?.['code'];

/**
 * A statement no other proposal in the tenant relates to: its own subject and object (random tokens), so
 * the write path's relate step finds no duplicate, contradiction or extension and admits it plainly.
 */
const tok = (): string => randomUUID().replace(/-/g, '').slice(0, 12);
function unrelated(): { subject: string; predicate: string; object: string; text: string } {
  const subject = `svc${tok()}`;
  const object = `db${tok()}`;
  return { subject, predicate: 'uses', object, text: `${subject} uses ${object}.` };
}

describe('optimistic concurrency', () => {
  it('50 writers revise the same record at the same expectedVersion → exactly one REVISED, 49 CONFLICT', async () => {
    const p = await app.gql<{ propose: Receipt }>(token, PROPOSE, {
      input: proposal({ statement: unrelated() }),
    });
    expect(p.errors).toBeUndefined();
    expect(p.data?.propose, JSON.stringify(p.data?.propose)).toMatchObject({
      outcome: 'ADMITTED',
      version: 1,
    });
    const id = p.data!.propose.recordId;

    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        app.gql<{ revise: Receipt }>(token, REVISE, {
          input: {
            id,
            expectedVersion: 1,
            statement: { subject: 'api', predicate: 'timeout', object: `${i}s`, text: `writer ${i}` },
            purpose: 'test',
            idempotencyKey: `${id}-w${i}-${randomUUID()}`,
          },
        }),
      ),
    );

    const ok = results.filter((r) => !r.errors);
    const failed = results.filter((r) => r.errors);
    expect(ok, JSON.stringify(ok.map((r) => r.data))).toHaveLength(1);
    expect(ok[0]!.data?.revise).toMatchObject({ outcome: 'REVISED', recordId: id, version: 2 });
    expect(failed).toHaveLength(49);
    for (const r of failed) {
      expect(r.errors, JSON.stringify(r.errors)).toHaveLength(1);
      expect(codeOf(r), JSON.stringify(r.errors)).toBe('CONFLICT');
      // Whether refused by the pre-check or by the projector in log order, the writer learns the version that won.
      expect(r.errors![0]!.extensions?.['currentVersion'], JSON.stringify(r.errors)).toBe(2);
      expect(r.data?.revise ?? null).toBeNull();
    }

    const h = await app.gql<{
      history: Array<{
        version: number;
        status: string;
        retiredAt: string | null;
        statement: { text: string };
      }>;
    }>(token, HISTORY, { id });
    expect(h.errors).toBeUndefined();
    expect(h.data?.history.map((v) => v.version)).toEqual([1, 2]);
    const winner = results.indexOf(ok[0]!);
    expect(h.data?.history[1]?.statement.text).toBe(`writer ${winner}`);
    expect(h.data?.history[1]?.retiredAt).toBeNull();

    const now = await app.gql<{ record: Rec }>(token, RECORD, { id });
    expect(now.data?.record).toMatchObject({
      version: 2,
      status: 'ACTIVE',
      statement: { text: `writer ${winner}` },
    });
  });

  it('a losing writer that retries with the same key and input gets the same CONFLICT, and nothing is written', async () => {
    const p = await app.gql<{ propose: Receipt }>(token, PROPOSE, {
      input: proposal({ statement: unrelated() }),
    });
    const id = p.data!.propose.recordId;
    const inputs = [0, 1].map((i) => ({
      id,
      expectedVersion: 1,
      statement: { subject: 'api', predicate: 'timeout', object: `${i}s`, text: `writer ${i}` },
      purpose: 'test',
      idempotencyKey: `${id}-retry-${i}`,
    }));
    const first = await Promise.all(
      inputs.map((input) => app.gql<{ revise: Receipt }>(token, REVISE, { input })),
    );
    const loser = first.findIndex((r) => r.errors);
    expect(loser).toBeGreaterThanOrEqual(0);
    expect(first.filter((r) => !r.errors)).toHaveLength(1);

    const again = await app.gql<{ revise: Receipt }>(token, REVISE, { input: inputs[loser] });
    expect(codeOf(again)).toBe('CONFLICT');
    const h = await app.gql<{ history: unknown[] }>(token, HISTORY, { id });
    expect(h.data?.history).toHaveLength(2);
  });
});

describe('concurrent proposals', () => {
  it('20 concurrent proposals with distinct keys in one tenant → 20 distinct records, all ADMITTED', async () => {
    const ns = `acme/conc-${Date.now()}`;
    const statements = Array.from({ length: 20 }, unrelated);
    const results = await Promise.all(
      statements.map((statement) =>
        app.gql<{ propose: Receipt }>(token, PROPOSE, { input: proposal({ namespace: ns, statement }) }),
      ),
    );
    for (const r of results) {
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      expect(r.data?.propose, JSON.stringify(r.data?.propose)).toMatchObject({
        outcome: 'ADMITTED',
        version: 1,
      });
    }
    const ids = results.map((r) => r.data!.propose.recordId);
    expect(new Set(ids).size).toBe(20);

    // Each is readable, and holds its own statement.
    const reads = await Promise.all(ids.map((id) => app.gql<{ record: Rec | null }>(token, RECORD, { id })));
    expect(reads.map((r) => r.data?.record?.statement.text)).toEqual(statements.map((st) => st.text));

    const list = await app.gql<{ records: { nodes: Array<{ id: string }> } }>(
      token,
      `query L($ns: String!) { records(filter: { namespace: $ns }, first: 100) { nodes { id } } }`,
      { ns },
    );
    expect(list.errors).toBeUndefined();
    expect(new Set(list.data?.records.nodes.map((n) => n.id))).toEqual(new Set(ids));
  });
});

describe('read-your-writes', () => {
  it('an awaited proposal is immediately readable by id (20 times in a row)', async () => {
    for (let i = 0; i < 20; i++) {
      const statement = unrelated();
      const p = await app.gql<{ propose: Receipt }>(token, PROPOSE, { input: proposal({ statement }) });
      expect(p.errors, JSON.stringify(p.errors)).toBeUndefined();
      expect(p.data?.propose, `iteration ${i}: ${JSON.stringify(p.data?.propose)}`).toMatchObject({
        outcome: 'ADMITTED',
        version: 1,
      });
      const r = await app.gql<{ record: Rec | null }>(token, RECORD, { id: p.data!.propose.recordId });
      expect(r.errors).toBeUndefined();
      expect(r.data?.record, `iteration ${i}`).not.toBeNull();
      expect(r.data?.record).toMatchObject({
        id: p.data!.propose.recordId,
        version: 1,
        statement: { text: statement.text },
      });
    }
  });
});

describe('a write retried before its first append is projected', () => {
  it('both answers name the one record that is stored', async () => {
    // Two sends of one write (a client retrying a call whose answer it never got): neither finds the
    // other's receipt, so both are appended; the projection keeps the first.
    const input = { ...proposal({ statement: unrelated() }), await: false };
    const [a, b] = await Promise.all(
      [1, 2].map(() => app.gql<{ propose: Receipt }>(token, PROPOSE, { input })),
    );
    expect(a!.errors ?? b!.errors).toBeUndefined();
    const answers = [a!.data!.propose, b!.data!.propose];
    expect(answers.map((r) => r.outcome)).toEqual(['PENDING', 'PENDING']);
    expect(answers[0]!.eventIds).not.toEqual(answers[1]!.eventIds);
    expect(answers[1]!.recordId).toBe(answers[0]!.recordId);

    const deadline = Date.now() + 60_000;
    let r = await app.gql<{ record: Rec | null }>(token, RECORD, { id: answers[0]!.recordId });
    while (!r.data?.record && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 50));
      r = await app.gql<{ record: Rec | null }>(token, RECORD, { id: answers[0]!.recordId });
    }
    expect(r.data?.record).toMatchObject({ id: answers[0]!.recordId, version: 1 });
  });
});
