import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rebuild } from '../../src/projector/rebuild.ts';
import {
  freshTenant,
  PROPOSE,
  proposal,
  RETRACT,
  REVISE,
  startApp,
  type TestApp,
} from '../support/harness.ts';

/**
 * Correcting memory end to end (issue #14, parts 1–2): a poisoned session rolled back by its changeset
 * (the episode's records REVERTED, three records derived from them TAINTED and queued, nothing else
 * changed, as-of reads before the rollback unchanged, a rebuild reproducing it), a namespace rolled back
 * to a time across a revise, a retract and an approve, and the refusals (no scope, unknown target) that
 * append nothing. The run wipes the graph and uses its own topic: the rebuild replays only this file.
 */
const nonce = randomBytes(4).toString('hex');
const topic = `muninn.test.rollback.${nonce}`;
const NS = 'acme/poison';
const TL = 'acme/timeline';
const ROLLBACK = `mutation B($input: RollbackInput!) { rollback(input: $input) {
  outcome rollbackId reason reverted restored review tainted eventIds } }`;
const INGEST = `mutation I($input: EpisodeInput!) { ingestEpisode(input: $input) { outcome recordId } }`;
const APPROVE = `mutation A($input: ApproveInput!) { approve(input: $input) { outcome recordId version } }`;
const FIELDS = `id class status version changesetId flags reviewReasons statement { text } validFrom validTo
  approvals { by } taint { path reason }`;
const RECORD = `query R($id: ID!, $asOf: AsOf) { record(id: $id, asOf: $asOf) { ${FIELDS} } }`;
const RECORDS = `query L($ns: String!, $after: String) { records(filter: { namespace: $ns, statuses:
  [CANDIDATE, ACTIVE, CONTESTED, SUPERSEDED, RETRACTED, REJECTED, ARCHIVED, REVERTED] }, first: 500, after: $after) {
  nodes { ${FIELDS} } pageInfo { endCursor hasNextPage } } }`;
const RECALL = `query C($input: RecallInput!) { recall(input: $input) { items { record { id } why { taint { path } } } } }`;
const QUEUE = `query Q($ns: String!) { reviewQueue(namespace: $ns) { nodes { id reasons flags record { id status } } } }`;

type Rec = {
  id: string;
  class: string;
  status: string;
  version: number;
  changesetId: string | null;
  flags: string[];
  statement: { text: string };
  approvals: Array<{ by: string }>;
  taint: { path: string[]; reason: string } | null;
};
type RollbackReceipt = {
  outcome: string;
  rollbackId: string;
  reverted: string[];
  restored: string[];
  review: string[];
  tainted: string[];
};

let app: TestApp;
const tenant = freshTenant('rollback');
let writer: string;
let writer2: string;
let reviewer: string;

const code = (r: { errors?: ReadonlyArray<{ extensions?: Record<string, unknown> }> | undefined }) =>
  r.errors?.[0]?.extensions?.['code'];
const ledgerSize = async () =>
  (await app.m.ledger.offsets()).reduce((s, o) => s + BigInt(o.highWatermark), 0n);

async function propose(token: string, o: Record<string, unknown>): Promise<string> {
  const r = await app.gql<{ propose: { recordId: string; outcome: string } }>(token, PROPOSE, {
    input: proposal(o),
  });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data!.propose.recordId;
}

async function record(id: string, knownAt?: string): Promise<Rec> {
  const r = await app.gql<{ record: Rec }>(reviewer, RECORD, {
    id,
    ...(knownAt ? { asOf: { knownAt } } : {}),
  });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data!.record;
}

/** Every record of a namespace subtree, every status, keyed by id. */
async function dump(ns: string): Promise<Map<string, Rec>> {
  const out = new Map<string, Rec>();
  let after: string | null = null;
  for (;;) {
    const r: Awaited<
      ReturnType<
        typeof app.gql<{
          records: { nodes: Rec[]; pageInfo: { endCursor: string | null; hasNextPage: boolean } };
        }>
      >
    > = await app.gql(reviewer, RECORDS, { ns, after });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    for (const n of r.data!.records.nodes) out.set(n.id, n);
    if (!r.data!.records.pageInfo.hasNextPage) return out;
    after = r.data!.records.pageInfo.endCursor;
  }
}

function changed(before: Map<string, Rec>, after: Map<string, Rec>): string[] {
  const ids = new Set([...before.keys(), ...after.keys()]);
  return [...ids].filter((id) => JSON.stringify(before.get(id)) !== JSON.stringify(after.get(id))).sort();
}

async function rollback(token: string, input: Record<string, unknown>) {
  return app.gql<{ rollback: RollbackReceipt }>(token, ROLLBACK, {
    input: { reason: 'test rollback', idempotencyKey: randomUUID(), ...input },
  });
}

beforeAll(async () => {
  app = await startApp({
    MUNINN_LEDGER_TOPIC: topic,
    MUNINN_DLQ_TOPIC: `${topic}.dlq`,
    MUNINN_PROJECTOR_GROUP: `rollback-${nonce}`,
  });
  await app.m.store.wipe();
  await app.m.store.migrate();
  writer = await app.token({ tenant, sub: 'alice', scopes: ['read', 'write'] });
  writer2 = await app.token({ tenant, sub: 'bob', scopes: ['read', 'write'] });
  reviewer = await app.token({ tenant, sub: 'rev-1', scopes: ['read', 'review'] });
}, 300_000);

afterAll(async () => {
  await app?.stop();
});

describe('rollback of a poisoned session (changeset episode:<id>)', () => {
  const facts: string[] = [];
  let episodeRecords: string[] = [];
  const derived: string[] = [];
  let changeset = '';
  let before = new Map<string, Rec>();
  let t0 = '';

  it('an episode injects 5 false facts; 3 later records are proposed as derived from them', async () => {
    for (let i = 0; i < 3; i++) await propose(writer, { namespace: NS });
    const subjects = ['Zorblax', 'Quintar', 'Velmora', 'Drakkon', 'Pellucid'].map((s) => `${s}${nonce}`);
    const text = subjects.map((s, i) => `${s} uses Cobol${i}.`).join(' ');
    const ep = await app.gql<{ ingestEpisode: Array<{ outcome: string; recordId: string }> }>(
      writer,
      INGEST,
      {
        input: {
          namespace: NS,
          source: 'chat',
          occurredAt: '2026-11-30T10:00:00Z',
          turns: [{ role: 'user', speaker: 'mallory', text }],
          purpose: 'test',
          idempotencyKey: randomUUID(),
        },
      },
    );
    expect(ep.errors, JSON.stringify(ep.errors)).toBeUndefined();
    episodeRecords = ep.data!.ingestEpisode.map((r) => r.recordId).sort();
    for (const id of episodeRecords) {
      const r = await record(id);
      changeset = r.changesetId!;
      if (r.class === 'FACT') facts.push(id);
    }
    // The 5 facts, plus the turn's OBSERVATION ("mallory said …"): all of the session's changeset.
    expect(facts).toHaveLength(5);
    expect(changeset).toMatch(/^episode:/);
    derived.push(await propose(writer, { namespace: NS, derivedFrom: [facts[0]] }));
    derived.push(await propose(writer, { namespace: NS, derivedFrom: [facts[1], facts[2]] }));
    derived.push(await propose(writer2, { namespace: NS, derivedFrom: [derived[0]] }));
    before = await dump(NS);
    expect(before.size).toBe(3 + episodeRecords.length + 3);
    t0 = new Date().toISOString();
  });

  it('without the review scope → FORBIDDEN; unknown changeset or event → NOT_FOUND; nothing appended', async () => {
    const size = await ledgerSize();
    expect(code(await rollback(writer, { changesetId: changeset }))).toBe('FORBIDDEN');
    expect(code(await rollback(reviewer, { changesetId: `episode:${randomUUID()}` }))).toBe('NOT_FOUND');
    expect(code(await rollback(reviewer, { eventId: randomUUID() }))).toBe('NOT_FOUND');
    expect(code(await rollback(reviewer, { eventId: randomUUID(), changesetId: changeset }))).toBe(
      'BAD_USER_INPUT',
    );
    expect(await ledgerSize()).toBe(size);
    expect(await dump(NS)).toEqual(before);
  });

  it('reverts the session, taints and queues the 3 derived records, and changes nothing else', async () => {
    const r = await rollback(reviewer, { changesetId: changeset });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    const receipt = r.data!.rollback;
    expect(receipt.outcome).toBe('ROLLED_BACK');
    expect([...receipt.reverted].sort()).toEqual(episodeRecords);
    expect(receipt.restored).toEqual([]);
    expect(receipt.review).toEqual([]);
    expect([...receipt.tainted].sort()).toEqual([...derived].sort());

    const after = await dump(NS);
    expect(changed(before, after)).toEqual([...episodeRecords, ...derived].sort());
    for (const id of episodeRecords) {
      const a = after.get(id)!;
      expect(a).toMatchObject({ status: 'REVERTED', version: before.get(id)!.version + 1 });
      expect(a.statement).toEqual(before.get(id)!.statement);
    }
    // Tainted is a flag: the claim keeps its status and version; the path runs from the reverted fact.
    expect(after.get(derived[0]!)!.taint!.path).toEqual([facts[0], derived[0]]);
    expect(after.get(derived[1]!)!.taint!.path).toEqual([facts[1], derived[1]]);
    expect(after.get(derived[2]!)!.taint!.path).toEqual([facts[0], derived[0], derived[2]]);
    for (const id of derived) {
      expect(after.get(id)).toMatchObject({ status: 'ACTIVE', version: before.get(id)!.version });
      expect(after.get(id)!.flags).toContain('tainted');
    }

    const q = await app.gql<{ reviewQueue: { nodes: Array<{ id: string; reasons: string[] }> } }>(
      reviewer,
      QUEUE,
      { ns: NS },
    );
    expect(q.errors).toBeUndefined();
    const queued = new Map(q.data!.reviewQueue.nodes.map((n) => [n.id, n.reasons.join(' ')]));
    expect([...queued.keys()].sort()).toEqual([...derived].sort());
    expect(queued.get(derived[2]!)).toContain(facts[0]);
  });

  it("recall's why shows the taint path of a tainted record", async () => {
    const d = await record(derived[2]!);
    const r = await app.gql<{
      recall: { items: Array<{ record: { id: string }; why: { taint: { path: string[] } | null } }> };
    }>(reviewer, RECALL, {
      input: { query: d.statement.text, namespace: NS, purpose: 'test', recipe: 'bm25' },
    });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    const item = r.data!.recall.items.find((i) => i.record.id === derived[2]);
    expect(item?.why.taint?.path).toEqual([facts[0], derived[0], derived[2]]);
  });

  it('as-of reads at a system time before the rollback answer as before', async () => {
    for (const id of [...episodeRecords, ...derived]) {
      const then = await record(id, t0);
      const b = before.get(id)!;
      expect({ ...then, flags: b.flags, reviewReasons: undefined }).toEqual({
        ...b,
        reviewReasons: undefined,
      });
    }
  });

  it('a record proposed later from a reverted one is born tainted', async () => {
    const id = await propose(writer, { namespace: NS, derivedFrom: [facts[3]] });
    const r = await record(id);
    expect(r.taint!.path).toEqual([facts[3], id]);
    expect(r.flags).toContain('tainted');
  });

  it('a reviewer keeps a tainted record: flags and taint go, it leaves the queue, a revision says who kept it', async () => {
    const id = derived[1]!;
    const cur = await record(id);
    expect(cur.flags).toContain('tainted');
    const ok = await app.gql<{ approve: { outcome: string; version: number } }>(reviewer, APPROVE, {
      input: { proposalId: id, expectedVersion: cur.version },
    });
    expect(ok.errors, JSON.stringify(ok.errors)).toBeUndefined();
    expect(ok.data!.approve).toMatchObject({ outcome: 'ADMITTED', version: cur.version + 1 });
    const kept = await record(id);
    expect(kept).toMatchObject({ status: cur.status, reviewReasons: [], taint: null });
    expect(kept.flags).not.toContain('tainted');
    expect(kept.statement).toEqual(cur.statement);
    const h = await app.gql<{ history: Array<{ version: number; reason: string | null }> }>(
      reviewer,
      `query H($id: ID!) { history(id: $id) { version reason } }`,
      { id },
    );
    const last = h.data!.history.find((v) => v.version === cur.version + 1);
    expect(last?.reason).toMatch(/^kept after review by rev-1 \(tainted via /);
    const q = await app.gql<{ reviewQueue: { nodes: Array<{ id: string }> } }>(reviewer, QUEUE, { ns: NS });
    const queued = q.data!.reviewQueue.nodes.map((n) => n.id);
    expect(queued).not.toContain(id);
    expect(queued).toContain(derived[0]);
    // A record nothing flagged does not wait for review: approving it is still a conflict.
    const control = [...before.values()].find(
      (r) => r.status === 'ACTIVE' && !episodeRecords.includes(r.id) && !derived.includes(r.id),
    )!;
    const again = await app.gql(reviewer, APPROVE, {
      input: { proposalId: control.id, expectedVersion: control.version },
    });
    expect(code(again)).toBe('CONFLICT');
  });
});

describe('rollback of a changeset someone else has changed since', () => {
  it('a later revise by another writer is not overwritten: the record goes to review with the reason', async () => {
    const cs = `import-${nonce}`;
    const mine = await propose(writer, { namespace: NS, changesetId: cs });
    const theirs = await propose(writer, { namespace: NS, changesetId: cs });
    const rev = await app.gql(writer2, REVISE, {
      input: {
        id: theirs,
        expectedVersion: 1,
        statement: { subject: 'b', predicate: 'is', object: 'c', text: 'B is c.' },
        purpose: 'test',
        idempotencyKey: randomUUID(),
      },
    });
    expect(rev.errors).toBeUndefined();
    const r = await rollback(reviewer, { changesetId: cs });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    expect(r.data!.rollback).toMatchObject({ reverted: [mine], review: [theirs] });
    const t = await record(theirs);
    expect(t).toMatchObject({ status: 'ACTIVE', version: 2, statement: { text: 'B is c.' } });
    expect(t.flags).toContain('rollback:review');
    const q = await app.gql<{ reviewQueue: { nodes: Array<{ id: string; reasons: string[] }> } }>(
      reviewer,
      QUEUE,
      { ns: NS },
    );
    const reasons = q.data!.reviewQueue.nodes.find((n) => n.id === theirs)?.reasons.join(' ');
    expect(reasons).toContain('RecordRevised by');
  });
});

describe('rollback of a namespace to a time T', () => {
  it('undoes a revise, a retract, an approve and a proposal made after T; records untouched since stay', async () => {
    const [r1, r2, r3] = [
      await propose(writer, { namespace: TL }),
      await propose(writer, { namespace: TL }),
      await propose(writer, { namespace: TL }),
    ];
    const n = randomUUID().slice(0, 8);
    const cand = await propose(writer, {
      namespace: TL,
      class: 'NORMATIVE',
      statement: {
        subject: `svc-${n}`,
        predicate: 'must use',
        object: 'mTLS',
        text: `Svc ${n} must use mTLS.`,
      },
    });
    const before = await dump(TL);
    expect(before.get(cand)!.status).toBe('CANDIDATE');
    await new Promise((res) => setTimeout(res, 20));
    const T = new Date().toISOString();
    await new Promise((res) => setTimeout(res, 20));

    const rev = await app.gql(writer2, REVISE, {
      input: {
        id: r1,
        expectedVersion: 1,
        statement: { subject: 'x', predicate: 'is', object: 'y', text: 'X is y now.' },
        purpose: 'test',
        idempotencyKey: randomUUID(),
      },
    });
    expect(rev.errors).toBeUndefined();
    const ret = await app.gql(writer2, RETRACT, {
      input: { id: r2, expectedVersion: 1, reason: 'wrong', idempotencyKey: randomUUID() },
    });
    expect(ret.errors).toBeUndefined();
    const ap = await app.gql(reviewer, APPROVE, { input: { proposalId: cand, expectedVersion: 1 } });
    expect(ap.errors, JSON.stringify(ap.errors)).toBeUndefined();
    const r5 = await propose(writer2, { namespace: TL });
    const mid = await dump(TL);
    expect(mid.get(r1)!.statement.text).toBe('X is y now.');
    expect(mid.get(r2)!.status).toBe('RETRACTED');
    expect(mid.get(cand)!.status).toBe('ACTIVE');

    const r = await rollback(reviewer, { namespace: TL, to: T });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    expect([...r.data!.rollback.restored].sort()).toEqual([r1, r2, cand].sort());
    expect(r.data!.rollback.reverted).toEqual([r5]);

    const after = await dump(TL);
    expect(changed(mid, after)).toEqual([r1, r2, cand, r5].sort());
    for (const id of [r1, r2, cand]) {
      const a = after.get(id)!;
      const b = before.get(id)!;
      expect(a.version).toBe(mid.get(id)!.version + 1);
      expect({ status: a.status, text: a.statement.text, approvals: a.approvals }).toEqual({
        status: b.status,
        text: b.statement.text,
        approvals: b.approvals,
      });
    }
    expect(after.get(r5)!.status).toBe('REVERTED');
    expect(after.get(r3)).toEqual(before.get(r3));
    // What was believed between T and the rollback is still there to ask about.
    expect((await record(r1, new Date(Date.parse(T) + 1).toISOString())).statement.text).toBe(
      before.get(r1)!.statement.text,
    );
  });
});

describe('a retraction taints what was derived from it', () => {
  it('retracting a record flags the records derived from it, transitively, queued with the path', async () => {
    const NSR = 'acme/retract';
    const src = await propose(writer, { namespace: NSR });
    const child = await propose(writer, { namespace: NSR, derivedFrom: [src] });
    const grandchild = await propose(writer2, { namespace: NSR, derivedFrom: [child] });
    const other = await propose(writer, { namespace: NSR });
    const r = await app.gql(writer, RETRACT, {
      input: { id: src, expectedVersion: 1, reason: 'it was wrong', idempotencyKey: randomUUID() },
    });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    expect((await record(child)).taint!.path).toEqual([src, child]);
    expect((await record(grandchild)).taint!.path).toEqual([src, child, grandchild]);
    expect((await record(other)).taint).toBeNull();
    const q = await app.gql<{ reviewQueue: { nodes: Array<{ id: string; reasons: string[] }> } }>(
      reviewer,
      QUEUE,
      { ns: NSR },
    );
    const queued = new Map(q.data!.reviewQueue.nodes.map((n) => [n.id, n.reasons.join(' ')]));
    expect(queued.get(child)).toContain(`derived from ${src}, retracted`);
    expect(queued.has(grandchild)).toBe(true);
    expect(queued.has(other)).toBe(false);
    // Stored in clear, a taint's reason names ids only, never the retraction's (possibly sealed) reason.
    expect(queued.get(child)).not.toContain('it was wrong');
  });
});

describe('rollback and replay', () => {
  it('a rebuild from the ledger reproduces the state exactly (same state hash)', async () => {
    await app.m.projector!.stop();
    const live = await app.m.store.stateHash();
    const rebuilt = await rebuild(app.m.ledger, app.m.store, topic, 500, undefined, app.m.decode);
    expect(rebuilt.hash).toBe(live.hash);
  });
});
