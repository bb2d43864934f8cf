import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshTenant, PROPOSE, proposal, startApp, type TestApp } from '../support/harness.ts';

/**
 * Writes about one subject that arrive together are decided one after another (ingest/subject-gate.ts):
 * each sees the one before it in the graph, so a repeat reinforces instead of adding a record and another
 * object contests instead of standing beside it unchallenged. Before the gate, four concurrent proposals
 * of one statement made four ACTIVE records.
 */
const suffix = randomUUID().slice(0, 8);
const topic = `muninn.test.concurrent.${suffix}`;
const RECORDS = `query R($f: RecordFilter!) { records(filter: $f, first: 100) { nodes { id status reinforcements statement { subject object } } } }`;

type Receipt = { outcome: string; recordId: string | null; reason: string | null };
type Rec = {
  id: string;
  status: string;
  reinforcements: number;
  statement: { subject: string; object: string };
};

let app: TestApp;
let token: string;
/** A second API process on the same ledger and graph (no projector of its own): another replica. */
let replica: TestApp;
let replicaToken: string;

beforeAll(async () => {
  app = await startApp({
    MUNINN_LEDGER_TOPIC: topic,
    MUNINN_DLQ_TOPIC: `${topic}.dlq`,
    MUNINN_PROJECTOR_GROUP: `concurrent-${suffix}`,
  });
  const tenant = freshTenant('concurrent');
  token = await app.token({ tenant, sub: 'agent', scopes: ['read', 'write'] });
  replica = await startApp({
    MUNINN_ROLE: 'api',
    MUNINN_LEDGER_TOPIC: topic,
    MUNINN_DLQ_TOPIC: `${topic}.dlq`,
  });
  replicaToken = await replica.token({ tenant, sub: 'agent', scopes: ['read', 'write'] });
});

afterAll(async () => {
  await replica?.stop();
  await app?.stop();
});

const statement = (subject: string, object: string) => ({
  subject,
  predicate: 'uses',
  object,
  text: `The ${subject} uses ${object}.`,
});

/** Proposes all at once, through this app, or alternately through it and the replica (`across`). */
async function proposeAll(
  inputs: ReadonlyArray<Record<string, unknown>>,
  wait: boolean,
  across = false,
): Promise<Receipt[]> {
  const answers = await Promise.all(
    inputs.map((i, n) => {
      const [via, t] = across && n % 2 === 1 ? [replica, replicaToken] : [app, token];
      return via.gql<{ propose: Receipt }>(t, PROPOSE, { input: { ...i, await: wait } });
    }),
  );
  for (const a of answers) expect(a.errors).toBeUndefined();
  return answers.map((a) => a.data!.propose);
}

async function recordsAbout(subject: string): Promise<Rec[]> {
  const r = await app.gql<{ records: { nodes: Rec[] } }>(token, RECORDS, {
    f: { namespace: 'acme', statuses: ['ACTIVE', 'CONTESTED', 'CANDIDATE', 'SUPERSEDED'] },
  });
  expect(r.errors).toBeUndefined();
  return r.data!.records.nodes.filter((n) => n.statement.subject === subject);
}

describe('concurrent writes about one subject', () => {
  it('four agents proposing one statement at once (awaited) make one record, reinforced three times', async () => {
    const subject = `billing-api-${suffix}`;
    const same = statement(subject, 'redis');
    const receipts = await proposeAll(
      [0, 1, 2, 3].map(() => proposal({ statement: same })),
      true,
    );
    const admitted = receipts.filter((r) => r.outcome === 'ADMITTED');
    expect(admitted).toHaveLength(1);
    const reinforced = receipts.filter((r) => r.outcome === 'REINFORCED');
    expect(reinforced).toHaveLength(3);
    for (const r of reinforced) expect(r.recordId).toBe(admitted[0]!.recordId);
    const stored = await recordsAbout(subject);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ id: admitted[0]!.recordId, status: 'ACTIVE', reinforcements: 3 });
  });

  it('without awaiting, the repeats still reinforce the first once projected', async () => {
    const subject = `cart-api-${suffix}`;
    const same = statement(subject, 'kafka');
    const receipts = await proposeAll(
      [0, 1, 2, 3, 4].map(() => proposal({ statement: same })),
      false,
    );
    expect(receipts.every((r) => r.outcome === 'PENDING')).toBe(true);
    await expect
      .poll(async () => (await recordsAbout(subject)).map((r) => r.reinforcements), { timeout: 15_000 })
      .toEqual([4]);
  });

  it('two agents giving the subject different objects at once contest each other', async () => {
    const subject = `search-api-${suffix}`;
    const receipts = await proposeAll(
      [
        proposal({ statement: statement(subject, 'redis') }),
        proposal({ statement: statement(subject, 'memcached') }),
      ],
      true,
    );
    expect(receipts.map((r) => r.outcome).sort()).toEqual(['ADMITTED', 'CONTESTED']);
    const stored = await recordsAbout(subject);
    expect(stored.map((r) => r.status)).toEqual(['CONTESTED', 'CONTESTED']);
  });
});

describe('concurrent writes about one subject through two API processes', () => {
  it('four proposals of one statement split over two replicas make one record, reinforced three times', async () => {
    const subject = `ledger-api-${suffix}`;
    const receipts = await proposeAll(
      [0, 1, 2, 3].map(() => proposal({ statement: statement(subject, 'postgres') })),
      true,
      true,
    );
    expect(receipts.map((r) => r.outcome).sort()).toEqual([
      'ADMITTED',
      'REINFORCED',
      'REINFORCED',
      'REINFORCED',
    ]);
    const stored = await recordsAbout(subject);
    expect(stored.map((r) => [r.status, r.reinforcements])).toEqual([['ACTIVE', 3]]);
  });

  it('two objects given to one subject through two replicas at once contest each other', async () => {
    const subject = `queue-api-${suffix}`;
    const receipts = await proposeAll(
      [
        proposal({ statement: statement(subject, 'rabbitmq') }),
        proposal({ statement: statement(subject, 'sqs') }),
      ],
      true,
      true,
    );
    expect(receipts.map((r) => r.outcome).sort()).toEqual(['ADMITTED', 'CONTESTED']);
    const stored = await recordsAbout(subject);
    expect(stored.map((r) => r.status)).toEqual(['CONTESTED', 'CONTESTED']);
  });
});
