import { randomInt, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { thresholdsFor } from '../../src/domain/similarity.ts';
import { createEmbedder } from '../../src/compose.ts';
import { cosine } from '../../src/ports/embedder.ts';
import { freshTenant, PROPOSE, proposal, startApp, type TestApp } from '../support/harness.ts';

/**
 * End to end on the real stack: the review queue (subscription over graphql-ws, reject, approve) and entity
 * resolution through `propose … about` (exact alias / external id, embedding neighbours: at or above the
 * model's merge threshold — 0.92 on MiniLM's scale — a merge, between it and the same-as threshold a new
 * entity with a tentative SAME_AS, below that a new entity), plus changesets.
 */

const REVIEW_NS = 'acme/review';
const ENTITY_NS = 'acme/entities';
/** The server's model's thresholds (domain/similarity.ts), set once the app is up. */
let MERGE = 0;
let SAME_AS = 0;
/**
 * Cosines this close to a threshold are not used: the server embeds names in a batch, the test one by one,
 * and a model whose vectors move with their batch-mates (bge's int8 export) moves them by up to ~0.02.
 */
let MARGIN = 0.01;

const REJECT = `mutation J($input: RejectInput!) { reject(input: $input) { outcome recordId version reason } }`;
const APPROVE = `mutation A($input: ApproveInput!) { approve(input: $input) { outcome recordId version reason } }`;
const QUEUE = `query Q($ns: String!) { reviewQueue(namespace: $ns) { nodes { id version reasons record { id status } } } }`;
const HISTORY = `query H($id: ID!) { history(id: $id) { version status reason } }`;
const RECORD = `query R($id: ID!) { record(id: $id) { id status changesetId history { version changesetId } about { id name type aliases externalIds } } }`;
const ENTITY = `query E($ref: EntityRefInput!) { entity(ref: $ref) { id name type aliases externalIds } }`;
const SUBSCRIBE = `subscription S($ns: String!) { reviewQueue(namespace: $ns) { id version reasons flags proposedBy record { id status class reviewReasons statement { text } } } }`;

type Receipt = { outcome: string; recordId: string | null; version: number | null; reason: string | null };
type EntityView = { id: string; name: string; type: string | null; aliases: string[]; externalIds: string[] };
type RecordView = {
  id: string;
  status: string;
  changesetId: string | null;
  history: Array<{ version: number; changesetId: string | null }>;
  about: EntityView[];
};
type ProposalEvent = {
  id: string;
  version: number;
  reasons: string[];
  flags: string[];
  proposedBy: string;
  record: { id: string; status: string; class: string; reviewReasons: string[]; statement: { text: string } };
};

let app: TestApp;
let embedder: Awaited<ReturnType<typeof createEmbedder>>;

beforeAll(async () => {
  app = await startApp();
  // The server's own model: its cosines and its thresholds decide.
  embedder = await createEmbedder(app.config);
  ({ entityMerge: MERGE, entitySameAs: SAME_AS } = thresholdsFor(embedder.modelId));
  MARGIN = embedder.batchInvariant === false ? 0.03 : 0.01;
});
afterAll(async () => {
  await embedder?.close?.();
  await app?.stop();
});

// ---------------------------------------------------------------------------------------------------------
// helpers

const code = (r: { errors?: ReadonlyArray<{ extensions?: Record<string, unknown> }> | undefined }): unknown =>
  r.errors?.[0]?.extensions?.['code'];

async function tokens(prefix: string) {
  const tenant = freshTenant(prefix);
  return {
    tenant,
    writer: await app.token({ tenant, sub: 'alice', scopes: ['read', 'write'] }),
    reviewer: await app.token({ tenant, sub: 'rev-1', scopes: ['read', 'review'] }),
  };
}

async function propose(token: string, o: Record<string, unknown>): Promise<Receipt> {
  const r = await app.gql<{ propose: Receipt }>(token, PROPOSE, { input: proposal(o) });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data!.propose;
}

/** A NORMATIVE proposal in acme/review: the default policy queues it (review:class). */
async function queued(token: string): Promise<string> {
  const n = randomUUID().slice(0, 8);
  const r = await propose(token, {
    namespace: REVIEW_NS,
    class: 'NORMATIVE',
    statement: {
      subject: `service-${n}`,
      predicate: 'must use',
      object: 'mTLS',
      text: `Service ${n} must use mTLS for every call.`,
    },
  });
  expect(r.outcome).toBe('QUEUED');
  return r.recordId!;
}

async function record(token: string, id: string): Promise<RecordView> {
  const r = await app.gql<{ record: RecordView | null }>(token, RECORD, { id });
  expect(r.errors).toBeUndefined();
  expect(r.data?.record, `record ${id}`).toBeTruthy();
  return r.data!.record!;
}

/** Proposes a FACT about the given entity references and returns the entity ids the record is about. */
async function about(token: string, refs: Array<Record<string, string>>): Promise<EntityView[]> {
  const r = await propose(token, { namespace: ENTITY_NS, about: refs });
  expect(r.outcome).toBe('ADMITTED');
  return (await record(token, r.recordId!)).about;
}

async function sameAsEdges(tenant: string) {
  const res = await app.m.store.db.read(
    'test.sameAs',
    `MATCH (a:Entity {tenant: $t})-[s:SAME_AS]->(b:Entity)
     RETURN a.id AS fromId, a.name AS fromName, b.id AS toId, b.name AS toName, s.confidence AS confidence, s.tentative AS tentative`,
    { t: tenant },
  );
  return res.records.map((r) => ({
    fromId: String(r.get('fromId')),
    fromName: String(r.get('fromName')),
    toId: String(r.get('toId')),
    toName: String(r.get('toName')),
    confidence: Number(r.get('confidence')),
    tentative: r.get('tentative') as unknown,
  }));
}

async function entityCount(tenant: string): Promise<number> {
  const res = await app.m.store.db.read(
    'test.entities',
    'MATCH (e:Entity {tenant: $t}) RETURN count(e) AS n',
    { t: tenant },
  );
  return Number(res.records[0]?.get('n'));
}

async function cos(a: string, b: string): Promise<number> {
  const [x, y] = await embedder.embed([a, b]);
  return cosine(x!, y!);
}

/** A pronounceable nonsense word, new each run, so that names never collide with earlier runs' entities. */
function word(): string {
  const C = 'bdfgklmnprstvz';
  const V = 'aeiou';
  const syl = () => C.charAt(randomInt(C.length)) + V.charAt(randomInt(V.length));
  return syl() + syl() + syl() + C.charAt(randomInt(C.length));
}
const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** "<Word> API" and a variant of it whose cosine lies inside the SAME_AS band, away from both edges. */
async function sameAsBandPair(): Promise<{ base: string; near: string }> {
  const tried: string[] = [];
  for (let attempt = 0; attempt < 12; attempt++) {
    const w = word();
    const base = `${cap(w)} API`;
    for (const n of [`${w} service`, `${w} backend`, `${w} billing service`, `${w}-api service`]) {
      const c = await cos(base, n);
      if (c >= SAME_AS + MARGIN && c < MERGE - MARGIN) return { base, near: n };
      tried.push(`${n}=${c.toFixed(3)}`);
    }
  }
  throw new Error(`no SAME_AS-band name pair found; tried ${tried.join(', ')}`);
}

// ---------------------------------------------------------------------------------------------------------
// 1. review queue

describe('review queue', () => {
  const clients: Client[] = [];
  afterAll(async () => {
    await Promise.all(clients.map(async (c) => c.dispose()));
  });

  it('the reviewQueue subscription delivers a NORMATIVE proposal proposed after subscribing, with a review:class reason', async () => {
    const { writer, reviewer } = await tokens('review');
    // Given a reviewer subscribed to reviewQueue(namespace: "acme/review") over graphql-ws
    let connected!: () => void;
    const isConnected = new Promise<void>((r) => (connected = r));
    const client = createClient({
      url: app.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${reviewer}` },
      on: { connected: () => connected() },
    });
    clients.push(client);
    const events: ProposalEvent[] = [];
    let failure: unknown;
    let wanted: string | undefined;
    let delivered!: (p: ProposalEvent) => void;
    const arrived = new Promise<ProposalEvent>((r) => (delivered = r));
    const unsubscribe = client.subscribe<{ reviewQueue: ProposalEvent }>(
      { query: SUBSCRIBE, variables: { ns: REVIEW_NS } },
      {
        next: (v) => {
          if (v.errors) failure = v.errors;
          const p = v.data?.reviewQueue;
          if (!p) return;
          events.push(p);
          if (p.record.id === wanted) delivered(p);
        },
        error: (e) => (failure = e),
        complete: () => undefined,
      },
    );
    try {
      await isConnected;
      // When a writer proposes a NORMATIVE record into acme/review
      const id = await queued(writer);
      wanted = id;
      const early = events.find((p) => p.record.id === id);
      if (early) delivered(early);
      // Then the subscription delivers a Proposal for that record with a review:class reason
      const p = await Promise.race([
        arrived,
        new Promise<never>((_, reject) =>
          setTimeout(
            () => reject(new Error(`no proposal for ${id} within 15 s; got ${JSON.stringify(events)}`)),
            15_000,
          ),
        ),
      ]);
      expect(failure).toBeUndefined();
      expect(p.id).toBe(id);
      expect(p.record.id).toBe(id);
      expect(p.record.status).toBe('CANDIDATE');
      expect(p.record.class).toBe('NORMATIVE');
      expect(p.version).toBe(1);
      expect(p.reasons.some((x) => x.startsWith('review:class'))).toBe(true);
      expect(p.record.reviewReasons).toEqual(p.reasons);
      expect(p.proposedBy).toContain('alice');
    } finally {
      unsubscribe();
    }
  });

  it('reject with a reason → REJECTED receipt, history ends in REJECTED with that reason, and reviewQueue no longer lists it', async () => {
    const { writer, reviewer } = await tokens('review');
    // Given a queued proposal that the queue lists
    const id = await queued(writer);
    const before = await app.gql<{ reviewQueue: { nodes: Array<{ id: string }> } }>(reviewer, QUEUE, {
      ns: REVIEW_NS,
    });
    expect(before.errors).toBeUndefined();
    expect(before.data!.reviewQueue.nodes.map((n) => n.id)).toContain(id);
    // When the reviewer rejects it with a reason
    const reason = `not our policy (${randomUUID().slice(0, 6)})`;
    const r = await app.gql<{ reject: Receipt }>(reviewer, REJECT, {
      input: { proposalId: id, reason, expectedVersion: 1 },
    });
    // Then the receipt, the history and the queue all show the rejection
    expect(r.errors).toBeUndefined();
    expect(r.data!.reject).toMatchObject({ outcome: 'REJECTED', recordId: id, version: 2, reason });
    const h = await app.gql<{ history: Array<{ version: number; status: string; reason: string | null }> }>(
      reviewer,
      HISTORY,
      { id },
    );
    expect(h.errors).toBeUndefined();
    const last = h.data!.history[h.data!.history.length - 1];
    expect(h.data!.history[0]).toMatchObject({ version: 1, status: 'CANDIDATE' });
    expect(last).toEqual({ version: 2, status: 'REJECTED', reason });
    const after = await app.gql<{ reviewQueue: { nodes: Array<{ id: string }> } }>(reviewer, QUEUE, {
      ns: REVIEW_NS,
    });
    expect(after.errors).toBeUndefined();
    expect(after.data!.reviewQueue.nodes.map((n) => n.id)).not.toContain(id);
  });

  it('reject without a reason (omitted or empty) → BAD_USER_INPUT and the proposal stays CANDIDATE', async () => {
    const { writer, reviewer } = await tokens('review');
    const id = await queued(writer);
    const omitted = await app.gql(reviewer, REJECT, { input: { proposalId: id, expectedVersion: 1 } });
    expect(omitted.data?.['reject'] ?? null).toBeNull();
    expect(code(omitted)).toBe('BAD_USER_INPUT');
    const empty = await app.gql(reviewer, REJECT, {
      input: { proposalId: id, reason: '', expectedVersion: 1 },
    });
    expect(empty.data?.['reject'] ?? null).toBeNull();
    expect(code(empty)).toBe('BAD_USER_INPUT');
    expect((await record(reviewer, id)).status).toBe('CANDIDATE');
  });

  it('approving an already-rejected proposal → CONFLICT, and it stays REJECTED', async () => {
    const { writer, reviewer } = await tokens('review');
    const id = await queued(writer);
    const rej = await app.gql<{ reject: Receipt }>(reviewer, REJECT, {
      input: { proposalId: id, reason: 'duplicate of an existing rule' },
    });
    expect(rej.data?.reject.outcome).toBe('REJECTED');
    // approve with the current version (2), so that only the status can make it a conflict
    const r = await app.gql(reviewer, APPROVE, { input: { proposalId: id, expectedVersion: 2 } });
    expect(r.data?.['approve'] ?? null).toBeNull();
    expect(code(r)).toBe('CONFLICT');
    expect((await record(reviewer, id)).status).toBe('REJECTED');
  });
});

// ---------------------------------------------------------------------------------------------------------
// 2. entity resolution

describe('entity resolution through propose … about', () => {
  it('two proposals about "Payments API" (service) in other casing resolve to one entity; a third without a type too', async () => {
    const { tenant, writer } = await tokens('ent');
    // Given a record about { alias: "Payments API", type: "service" }
    const [first] = await about(writer, [{ alias: 'Payments API', type: 'service' }]);
    expect(first).toMatchObject({ name: 'Payments API', type: 'service', aliases: ['payments api'] });
    // When two more records are about "PAYMENTS API" (service) and "payments api" (no type)
    const [second] = await about(writer, [{ alias: 'PAYMENTS API', type: 'service' }]);
    const [third] = await about(writer, [{ alias: 'payments api' }]);
    // Then all three are about the same entity, and the tenant has exactly one entity
    expect(second!.id).toBe(first!.id);
    expect(third!.id).toBe(first!.id);
    expect(await entityCount(tenant)).toBe(1);
  });

  it('entity(ref: {alias: "payments api"}) returns the entity created as "Payments API"', async () => {
    const { writer } = await tokens('ent');
    const [created] = await about(writer, [{ alias: 'Payments API', type: 'service' }]);
    const r = await app.gql<{ entity: EntityView | null }>(writer, ENTITY, {
      ref: { alias: 'payments api' },
    });
    expect(r.errors).toBeUndefined();
    expect(r.data!.entity).toMatchObject({ id: created!.id, name: 'Payments API', type: 'service' });
  });

  it('an entity created with an externalId is found by that externalId, and a proposal citing only the externalId is about it', async () => {
    const { tenant, writer } = await tokens('ent');
    const ext = `github:acme/ledger-${randomUUID().slice(0, 6)}`;
    const [created] = await about(writer, [{ alias: 'Ledger Service', externalId: ext, type: 'service' }]);
    expect(created!.externalIds).toEqual([ext]);
    const r = await app.gql<{ entity: EntityView | null }>(writer, ENTITY, { ref: { externalId: ext } });
    expect(r.errors).toBeUndefined();
    expect(r.data!.entity).toMatchObject({ id: created!.id, name: 'Ledger Service', externalIds: [ext] });
    const [again] = await about(writer, [{ externalId: ext }]);
    expect(again!.id).toBe(created!.id);
    expect(await entityCount(tenant)).toBe(1);
  });

  it('entity(ref) for an alias nobody used → null', async () => {
    const { writer } = await tokens('ent');
    const r = await app.gql<{ entity: EntityView | null }>(writer, ENTITY, {
      ref: { alias: `nobody-${word()}` },
    });
    expect(r.errors).toBeUndefined();
    expect(r.data!.entity).toBeNull();
  });

  it("near-neighbour names follow the model's thresholds: ≥ merge merges, [same-as, merge) new entity + tentative SAME_AS, below it a new entity (at least one in the SAME_AS band)", async () => {
    // Given candidate (stored name, new name) pairs, with cosines computed by the same local model; a random
    // word does not always give a pair in the SAME_AS band, so a few words are tried
    let base = '';
    let cases: Array<{ near: string; c: number }> = [];
    let usable: Array<{ near: string; c: number }> = [];
    let inBand: Array<{ near: string; c: number }> = [];
    for (let attempt = 0; attempt < 12 && inBand.length === 0; attempt++) {
      const w = word();
      const other = word();
      base = `${cap(w)} API`;
      const nears = [
        `${w} service`,
        `${w} backend`,
        `${w}-api service`,
        `${w} billing service`,
        `${cap(w)} APIs`,
        `${cap(other)} API`,
      ];
      cases = [];
      for (const near of nears) cases.push({ near, c: await cos(base, near) });
      usable = cases.filter((x) => Math.abs(x.c - MERGE) > MARGIN && Math.abs(x.c - SAME_AS) > MARGIN);
      inBand = usable.filter((x) => x.c >= SAME_AS && x.c < MERGE);
    }
    expect(
      inBand.length,
      `no candidate lands in the SAME_AS band [${SAME_AS}, ${MERGE}) for "${base}": ${JSON.stringify(cases)}`,
    ).toBeGreaterThan(0);

    for (const { near, c } of usable) {
      // each pair in its own tenant, so the stored name is the only neighbour there
      const { tenant, writer } = await tokens('ent');
      // When "base" is stored, then a record is about "near" (same type)
      const [stored] = await about(writer, [{ alias: base, type: 'service' }]);
      const [resolved] = await about(writer, [{ alias: near, type: 'service' }]);
      const edges = await sameAsEdges(tenant);
      const what = `"${near}" vs "${base}" (cosine ${c.toFixed(3)})`;
      // Then the outcome is the one its cosine dictates
      if (c >= MERGE) {
        expect(resolved!.id, `${what} should merge`).toBe(stored!.id);
        expect(edges, what).toEqual([]);
      } else if (c >= SAME_AS) {
        expect(resolved!.id, `${what} should be a new entity`).not.toBe(stored!.id);
        expect(resolved!.name).toBe(near);
        expect(edges, `${what} should have a SAME_AS edge`).toHaveLength(1);
        expect(edges[0]).toMatchObject({
          fromId: resolved!.id,
          fromName: near,
          toId: stored!.id,
          toName: base,
          tentative: true,
        });
        expect(
          Math.abs(edges[0]!.confidence - c),
          `${what}: edge confidence ${edges[0]!.confidence}`,
        ).toBeLessThan(MARGIN);
      } else {
        expect(resolved!.id, `${what} should be a new entity`).not.toBe(stored!.id);
        expect(edges, `${what} should have no SAME_AS edge`).toEqual([]);
      }
    }
  });

  it('an exact alias under another explicit type is another entity (one name as a "planet" and as a "project")', async () => {
    const { writer } = await tokens('ent');
    const name = `${cap(word())}`;
    const [planet] = await about(writer, [{ alias: name, type: 'planet' }]);
    const [project] = await about(writer, [{ alias: name, type: 'project' }]);
    expect(project!.type).toBe('project');
    expect(project!.id).not.toBe(planet!.id);
  });

  it("another tenant's many same-named entities do not keep a SAME_AS-band neighbour from being found", async () => {
    // Given a pair of names in the SAME_AS band (a random word does not always give one: try a few words)
    const { base, near } = await sameAsBandPair();
    // and another tenant holding 64 entities named exactly like the new name (32 types per proposal)
    for (let t = 0; t < 2; t++) {
      const noisy = await tokens('noisy');
      const refs = Array.from({ length: 32 }, (_, i) => ({ alias: near, type: `kind-${i}` }));
      expect((await propose(noisy.writer, { namespace: ENTITY_NS, about: refs })).outcome).toBe('ADMITTED');
    }
    // When this tenant stores "base" and then a record is about "near"
    const { tenant, writer } = await tokens('ent');
    const [stored] = await about(writer, [{ alias: base, type: 'service' }]);
    const [resolved] = await about(writer, [{ alias: near, type: 'service' }]);
    // Then the SAME_AS edge to this tenant's own entity is still there
    expect(resolved!.id).not.toBe(stored!.id);
    expect(await sameAsEdges(tenant)).toEqual([
      expect.objectContaining({ fromId: resolved!.id, toId: stored!.id }),
    ]);
  });
});

// ---------------------------------------------------------------------------------------------------------
// 3. changesets

describe('changesets', () => {
  it('two proposals with the same changesetId both carry it (Record.changesetId and their revision); one without has none', async () => {
    const { writer } = await tokens('cs');
    const changesetId = `cs-${randomUUID()}`;
    const a = await propose(writer, { namespace: 'acme/changes', changesetId });
    const b = await propose(writer, { namespace: 'acme/changes', changesetId });
    const c = await propose(writer, { namespace: 'acme/changes' });
    for (const r of [a, b, c]) expect(r.outcome).toBe('ADMITTED');
    const [ra, rb, rc] = await Promise.all([a, b, c].map((r) => record(writer, r.recordId!)));
    expect(ra!.id).not.toBe(rb!.id);
    expect(ra!.changesetId).toBe(changesetId);
    expect(rb!.changesetId).toBe(changesetId);
    expect(ra!.history).toEqual([{ version: 1, changesetId }]);
    expect(rb!.history).toEqual([{ version: 1, changesetId }]);
    expect(rc!.changesetId).toBeNull();
  });
});
