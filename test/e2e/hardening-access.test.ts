import { randomInt, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { effectiveGrants } from '../../src/domain/access.ts';
import { entityIdFor } from '../../src/domain/commands.ts';
import { MemoryState } from '../../src/domain/memory-state.ts';
import { thresholdsFor } from '../../src/domain/similarity.ts';
import { createEmbedder } from '../../src/compose.ts';
import { cosine } from '../../src/ports/embedder.ts';
import { freshTenant, PROPOSE, proposal, startApp, type TestApp } from '../support/harness.ts';

/**
 * Issue #9: a hostile tenant member probed access. Each finding is reproduced as the member did it, then
 * asserted refused or harmless. Every attack case goes through `attack(...)`, which counts it; the
 * summary line feeds the README's figures.
 */

const GRANT = `mutation G($input: GrantAccessInput!) { grantAccess(input: $input) { outcome grantId } }`;
const REVOKE = `mutation V($input: RevokeAccessInput!) { revokeAccess(input: $input) { outcome } }`;
const APPROVE = `mutation A($input: ApproveInput!) { approve(input: $input) { outcome } }`;
const LIST = `query L($f: RecordFilter!) { records(filter: $f, first: 500) { totalCount nodes { id namespace sensitivity status } } }`;
const RECORD = `query R($id: ID!) { record(id: $id) { id status confidence reinforcements
  sources { episodeId } history { version status reason } relations { type target { id } }
  about { id name aliases externalIds } } }`;
const ENTITY = `query E($ref: EntityRefInput!) { entity(ref: $ref) { id name aliases externalIds } }`;
const RECALL = `query Q($input: RecallInput!) { recall(input: $input) { items { contested record { id status } why { contestedWith } } } }`;
const PROJECTION = `{ projection { healthy totalLag partitions { partition highWatermark } } }`;

type Rec = {
  id: string;
  status: string;
  confidence: number;
  reinforcements: number;
  sources: Array<{ episodeId: string }>;
  history: Array<{ version: number; status: string; reason: string | null }>;
  relations: Array<{ type: string; target: { id: string } | null }>;
  about: Array<{ id: string; name: string; aliases: string[]; externalIds: string[] }>;
};
type Receipt = { outcome: string; recordId: string | null; version: number | null; reason: string | null };
type Err = ReadonlyArray<{ message: string; extensions?: Record<string, unknown> }> | undefined;

const suffix = randomUUID().slice(0, 8);
const topic = `muninn.test.h9access.${suffix}`;
let app: TestApp;
let embedder: Awaited<ReturnType<typeof createEmbedder>>;
let tenant: string;
let root: string;
const ISS = () => app.config.auth.issuer;
const tally = { tried: 0, refused: 0 };

/** One attack case: counted as tried, and as refused once every assertion in it held. */
async function attack(what: string, fn: () => Promise<void>): Promise<void> {
  tally.tried++;
  await fn();
  tally.refused++;
  expect(what).toBeTruthy();
}

const code = (errors: Err) => errors?.[0]?.extensions?.['code'];
const token = (sub: string, o: { scopes?: string[]; act?: string } = {}) =>
  app.token({
    tenant,
    sub,
    scopes: o.scopes ?? ['read', 'write'],
    ...(o.act ? { act: { sub: o.act, iss: ISS() } } : {}),
  });

async function propose(t: string, o: Record<string, unknown>): Promise<Receipt> {
  const r = await app.gql<{ propose: Receipt }>(t, PROPOSE, { input: proposal(o) });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data!.propose;
}
const fact = (ns: string, sensitivity: string, subject: string, predicate: string, object: string) =>
  ({
    namespace: ns,
    sensitivity,
    statement: { subject, predicate, object, text: `${subject} ${predicate} ${object}.` },
  }) as const;
async function list(t: string, namespace = 'acme') {
  const r = await app.gql<{
    records: { totalCount: number; nodes: Array<{ id: string; namespace: string }> };
  }>(t, LIST, { f: { namespace } });
  expect(r.errors).toBeUndefined();
  return r.data!.records;
}
async function read(t: string, id: string): Promise<Rec | null> {
  const r = await app.gql<{ record: Rec | null }>(t, RECORD, { id });
  expect(r.errors).toBeUndefined();
  return r.data!.record;
}
async function grant(sub: string, namespace: string, maxSensitivity: string): Promise<string> {
  const r = await app.gql<{ grantAccess: { outcome: string; grantId: string } }>(root, GRANT, {
    input: { grantee: { sub }, namespace, maxSensitivity, reason: 'test', idempotencyKey: randomUUID() },
  });
  expect(r.data?.grantAccess.outcome, JSON.stringify(r.errors)).toBe('ADMITTED');
  return r.data!.grantAccess.grantId;
}
async function revoke(grantId: string): Promise<void> {
  const r = await app.gql<{ revokeAccess: { outcome: string } }>(root, REVOKE, {
    input: { grantId, reason: 'left the team' },
  });
  expect(r.data?.revokeAccess.outcome).toBe('ADMITTED');
}
async function recall(t: string, query: string, extra: Record<string, unknown> = {}) {
  const r = await app.gql<{
    recall: {
      items: Array<{ contested: boolean; record: { id: string }; why: { contestedWith: string[] } }>;
    };
  }>(t, RECALL, { input: { namespace: 'acme', purpose: 'test', query, recipe: 'bm25', ...extra } });
  expect(r.errors).toBeUndefined();
  return r.data!.recall.items;
}
/** A pronounceable nonsense word, new each run. */
function word(): string {
  const C = 'bdfgklmnprstvz';
  const V = 'aeiou';
  const syl = () => C.charAt(randomInt(C.length)) + V.charAt(randomInt(V.length));
  return syl() + syl() + syl();
}
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

const eng: string[] = [];
const hr: string[] = [];
/** eve: granted acme/eng up to INTERNAL. member: never granted, so the tenant default (CONFIDENTIAL). */
let eve: string;
let member: string;
const SAME_START = '2026-01-01T00:00:00.000Z';
const ENG = [
  ['the billing service', 'deploys through', 'the canary pipeline'],
  ['search indexes', 'are rebuilt', 'every night at two'],
  ['the mobile release train', 'leaves', 'every second Tuesday'],
  ['postgres backups', 'are verified by', 'a weekly restore drill'],
  ['the design system', 'lives in', 'the shared component library'],
  ['on-call engineers', 'rotate', 'every Monday morning'],
];
const HR = [
  ['Ana Lund', 'earns', '90k after the spring salary review'],
  ['the parental leave policy', 'grants', 'sixteen paid weeks'],
  ['salary bands for staff engineers', 'were raised in', 'March'],
  ['the sales team', 'has', 'two open performance improvement plans'],
  ['the relocation budget for new hires', 'is capped at', '8k'],
];

beforeAll(async () => {
  app = await startApp({
    MUNINN_LEDGER_TOPIC: topic,
    MUNINN_DLQ_TOPIC: `${topic}.dlq`,
    MUNINN_PROJECTOR_GROUP: `h9access-${suffix}`,
    // a new topic's consumer group takes a while to form on a loaded machine
    MUNINN_AWAIT_TIMEOUT_MS: '120000',
  });
  // The server's own model, whose cosines decide a merge.
  embedder = await createEmbedder(app.config);
  tenant = freshTenant('h9acc');
  root = await app.token({ tenant, sub: 'root', scopes: ['admin'] });
  // One engineering subtree (6 records the member was granted) and HR's CONFIDENTIAL records (5).
  const seed = (ns: string, sensitivity: string, [subject, predicate, object]: string[]) =>
    propose(root, fact(ns, sensitivity, subject!, predicate!, object!));
  const seeded = await Promise.all([
    ...ENG.map((st, i) => seed('acme/eng', i % 2 ? 'INTERNAL' : 'PUBLIC', st)),
    ...HR.map((st) => seed('acme/hr', 'CONFIDENTIAL', st)),
  ]);
  expect(seeded.map((r) => r.outcome)).toEqual(Array(11).fill('ADMITTED'));
  eng.push(...seeded.slice(0, 6).map((r) => r.recordId!));
  hr.push(...seeded.slice(6).map((r) => r.recordId!));
  await grant('eve', 'acme/eng', 'INTERNAL');
  eve = await token('eve');
  member = await token('member');
}, 600_000);
afterAll(async () => {
  console.log(`hardening-access: ${tally.tried} attack cases, ${tally.refused} refused (isolation)`);
  await embedder?.close?.();
  await app?.stop();
});

describe('finding 1: revoking the last grant never widens access', () => {
  it('6 records in acme/eng before the revoke; after it nothing — no HR record, no recall, no write', async () => {
    const gid = await grant('mallory', 'acme/eng', 'INTERNAL');
    const mallory = await token('mallory');
    const before = await list(mallory);
    expect(before.nodes.map((n) => n.id).sort()).toEqual([...eng].sort());
    expect(before.totalCount).toBe(6);
    expect((await recall(mallory, 'canary pipeline restore drill')).length).toBeGreaterThan(0);
    await revoke(gid);
    await attack('list after the revoke', async () => {
      const after = await list(mallory);
      expect(after.totalCount).toBe(0);
      expect(after.nodes).toEqual([]);
    });
    await attack('read HR records by id after the revoke', async () => {
      for (const id of [...hr, ...eng]) expect(await read(mallory, id)).toBeNull();
    });
    await attack('recall after the revoke', async () => {
      expect(await recall(mallory, 'canary pipeline restore drill')).toEqual([]);
      expect(await recall(mallory, 'salary review leave budget')).toEqual([]);
    });
    await attack('write after the revoke', async () => {
      const key = randomUUID();
      const r = await app.gql(mallory, PROPOSE, {
        input: proposal({ namespace: 'acme/eng', idempotencyKey: key }),
      });
      expect(code(r.errors)).toBe('FORBIDDEN');
      expect(await app.m.store.receipt(tenant, key)).toBeUndefined();
    });
    // control: someone never granted anything keeps the tenant default (all 11, HR included)
    expect((await list(await token('newcomer'))).totalCount).toBe(11);
  });

  it('an agent whose last grant was revoked reads nothing, for a member or an admin', async () => {
    const gid = await grant('bot-r', 'acme/eng', 'RESTRICTED');
    const carolViaBot = await token('carol', { act: 'bot-r' });
    expect((await list(carolViaBot)).totalCount).toBe(6);
    await revoke(gid);
    await attack('member through the revoked agent', async () => {
      expect((await list(carolViaBot)).totalCount).toBe(0);
    });
    await attack('admin through the revoked agent', async () => {
      expect((await list(await token('root', { scopes: ['admin'], act: 'bot-r' }))).totalCount).toBe(0);
    });
  });
});

describe('finding 2: entity resolution only among entities the writer may see', () => {
  let hidden: { id: string; name: string; ext: string };
  const entity = async (t: string, ref: Record<string, string>) => {
    const r = await app.gql<{ entity: Rec['about'][number] | null }>(t, ENTITY, { ref });
    expect(r.errors).toBeUndefined();
    return r.data!.entity;
  };
  const sameAsOf = async (id: string) =>
    (
      await app.m.store.db.read(
        'test.sameAs',
        'MATCH (:Entity {tenant: $t, id: $id})-[s:SAME_AS]->(b) RETURN b.id AS b',
        {
          t: tenant,
          id,
        },
      )
    ).records.map((r) => String(r.get('b')));
  const aboutOf = async (t: string, ref: Record<string, string>, namespace = 'acme/eng') => {
    // the harness's statement: a distinct one each time (never a duplicate of an earlier note)
    const r = await propose(t, { namespace, sensitivity: 'PUBLIC', about: [ref] });
    return (await read(t, r.recordId!))!.about;
  };
  const untouched = async () =>
    expect(await entity(root, { id: hidden.id })).toEqual({
      id: hidden.id,
      name: hidden.name,
      aliases: [hidden.name.toLowerCase()],
      externalIds: [hidden.ext],
    });

  beforeAll(async () => {
    const name = `${cap(word())} ${cap(word())}`;
    const ext = `emp:${randomInt(10_000, 99_999)}`;
    const r = await propose(root, {
      ...fact('acme/hr', 'CONFIDENTIAL', name, 'earns', '120k'),
      about: [{ alias: name, type: 'person', externalId: ext }],
    });
    hidden = { id: (await read(root, r.recordId!))!.about[0]!.id, name, ext };
  });

  it('(a) a PUBLIC record about a near alias neither merges into the hidden entity nor shows its name or ids', async () => {
    // the nearest spelling of the hidden name by the same local model, well above the merge threshold
    const spellings = [
      `${hidden.name}.`,
      `${hidden.name}!`,
      `${hidden.name.replace(' ', '-')}`,
      `${hidden.name}'s`,
    ];
    const [x, ...ys] = await embedder.embed([hidden.name, ...spellings]);
    const scored = spellings.map((s, i) => ({ s, c: cosine(x!, ys[i]!) })).sort((a, b) => b.c - a.c);
    const near = scored[0]!;
    expect(near.c, JSON.stringify(scored)).toBeGreaterThan(
      thresholdsFor(embedder.modelId).entityMerge + 0.01,
    );
    // control: a member who may read HR's record resolves that spelling into the hidden entity
    const c = await propose(member, {
      namespace: 'acme/hr',
      sensitivity: 'CONFIDENTIAL',
      about: [{ alias: near.s, type: 'person' }],
    });
    expect((await read(member, c.recordId!))!.about.map((e) => e.id)).toEqual([hidden.id]);

    await attack('near alias merge', async () => {
      const mine = await aboutOf(eve, { alias: near.s, type: 'person' });
      expect(mine).toHaveLength(1);
      expect(mine[0]!.id).not.toBe(hidden.id);
      expect(mine[0]).toMatchObject({ name: near.s, externalIds: [] });
      expect(JSON.stringify(mine)).not.toContain(hidden.ext);
      expect(await sameAsOf(mine[0]!.id)).toEqual([]);
    });
    await attack('entity() by the external id', async () =>
      expect(await entity(eve, { externalId: hidden.ext })).toBeNull(),
    );
    await attack('entity() by the real name', async () =>
      expect(await entity(eve, { alias: hidden.name })).toBeNull(),
    );
    await attack('entity() by the near alias', async () => {
      const e = await entity(eve, { alias: near.s });
      expect(e?.id).not.toBe(hidden.id);
      expect(e?.externalIds).toEqual([]);
    });
    await untouched();
  });

  it('(a) the exact name or the external id of a hidden entity gives the writer an entity of its own', async () => {
    // frank sees no entity at all yet (in acme/eng eve's near spelling would resolve first)
    await grant('frank', 'acme/ops', 'INTERNAL');
    const frank = await token('frank');
    await attack('exact name (same deterministic id)', async () => {
      expect(entityIdFor(tenant, 'person', hidden.name)).toBe(hidden.id);
      const [mine] = await aboutOf(frank, { alias: hidden.name, type: 'person' }, 'acme/ops');
      expect(mine!.id).not.toBe(hidden.id);
      expect(mine).toMatchObject({ name: hidden.name, externalIds: [] });
    });
    await attack('external id', async () => {
      const [mine] = await aboutOf(frank, { externalId: hidden.ext }, 'acme/ops');
      expect(mine!.id).not.toBe(hidden.id);
      expect(mine!.name).toBe(hidden.ext);
    });
    await untouched();
  });

  it('(b) an id probe is answered the same whether the entity exists unseen or not at all', async () => {
    const absent = randomUUID();
    const same = (a: unknown, b: unknown) =>
      expect(JSON.stringify(a).replaceAll(hidden.id, 'ID')).toBe(JSON.stringify(b).replaceAll(absent, 'ID'));
    await attack('about: [{id}] receipt', async () => {
      const probe = async (id: string) => {
        const key = randomUUID();
        const r = await app.gql(eve, PROPOSE, {
          input: proposal({ namespace: 'acme/eng', about: [{ id }], idempotencyKey: key }),
        });
        expect(code(r.errors)).toBe('BAD_USER_INPUT');
        expect(await app.m.store.receipt(tenant, key)).toBeUndefined();
        return { message: r.errors![0]!.message, code: code(r.errors) };
      };
      same(await probe(hidden.id), await probe(absent));
    });
    await attack('entity(ref: {id})', async () => {
      expect(await entity(eve, { id: hidden.id })).toBeNull();
      expect(await entity(eve, { id: absent })).toBeNull();
    });
    await attack('records(filter: {about: [{id}]})', async () => {
      const r = await app.gql(eve, LIST, { f: { namespace: 'acme', about: [{ id: hidden.id }] } });
      same(r, await app.gql(eve, LIST, { f: { namespace: 'acme', about: [{ id: absent }] } }));
    });
    await attack('recall anchors', async () => {
      same(
        await recall(eve, 'earns', { anchors: [{ id: hidden.id }], recipe: 'hybrid' }),
        await recall(eve, 'earns', { anchors: [{ id: absent }], recipe: 'hybrid' }),
      );
    });
  });
});

describe('finding 3: an admin acting through an agent reads what the agent may read', () => {
  it("the agent's grant narrows the admin; an agent never granted anything has the tenant default", async () => {
    await grant('bot-eng', 'acme/eng', 'PUBLIC');
    const r = await propose(root, fact('acme/eng', 'RESTRICTED', `vault-${word()}`, 'holds', 'keys'));
    expect(r.outcome).toBe('QUEUED');
    const a = await app.gql<{ approve: { outcome: string } }>(root, APPROVE, {
      input: { proposalId: r.recordId, expectedVersion: r.version },
    });
    expect(a.data?.approve.outcome).toBe('ADMITTED');
    const direct = await list(root);
    expect(direct.nodes.map((n) => n.id)).toEqual(expect.arrayContaining([...hr, r.recordId!]));
    const viaBot = await token('root', { scopes: ['admin'], act: 'bot-eng' });
    await attack('admin via agent: list', async () => {
      const l = await list(viaBot);
      expect(l.totalCount).toBeGreaterThan(0);
      expect(l.totalCount).toBeLessThan(direct.totalCount);
      for (const n of l.nodes) expect(n).toMatchObject({ namespace: 'acme/eng', sensitivity: 'PUBLIC' });
    });
    await attack('admin via agent: read by id', async () => {
      for (const id of [...hr, r.recordId!]) expect(await read(viaBot, id)).toBeNull();
    });
    await attack('admin via agent: recall', async () => {
      const ids = (await recall(viaBot, 'salary review leave budget vault keys')).map((i) => i.record.id);
      for (const id of [...hr, r.recordId!]) expect(ids).not.toContain(id);
    });
    await attack('admin via agent: write outside the agent grant', async () => {
      const x = await app.gql(viaBot, PROPOSE, { input: proposal({ namespace: 'acme/hr' }) });
      expect(code(x.errors)).toBe('FORBIDDEN');
    });
    await attack('admin via a never-granted agent: the tenant default (no RESTRICTED)', async () => {
      const l = await list(await token('root', { scopes: ['admin'], act: 'bot-new' }));
      expect(l.nodes.map((n) => n.id)).toEqual(expect.arrayContaining(hr));
      expect(l.nodes.map((n) => n.id)).not.toContain(r.recordId);
    });
  });
});

describe('finding 4: a record its readers cannot see never marks what they can see', () => {
  const at = (o: ReturnType<typeof fact>, text?: string) => ({
    ...o,
    validFrom: SAME_START,
    ...(text ? { statement: { ...o.statement, text } } : {}),
  });

  it('a CONFIDENTIAL contradiction leaves the INTERNAL record ACTIVE and traceless for its readers; readers of both see the conflict', async () => {
    const s = `checkout-${word()}`;
    const t = await propose(root, at(fact('acme/eng', 'INTERNAL', s, 'stores sessions in', 'redis')));
    const n = await propose(root, at(fact('acme/eng', 'CONFIDENTIAL', s, 'stores sessions in', 'memcached')));
    expect(n.outcome).toBe('CONTESTED'); // the writer, who sees both, is told
    await attack('contest through a hidden record', async () => {
      const seen = (await read(eve, t.recordId!))!;
      expect(seen.status).toBe('ACTIVE');
      expect(seen.history.map((h) => h.status)).toEqual(['ACTIVE']);
      expect(JSON.stringify(seen)).not.toContain(n.recordId!);
      expect(seen.relations).toEqual([]);
      const item = (await recall(eve, `${s} stores sessions`)).find((i) => i.record.id === t.recordId);
      expect(item?.contested).toBe(false);
    });
    const both = (await read(member, n.recordId!))!;
    expect(both.status).toBe('CONTESTED');
    expect(both.relations).toContainEqual({ type: 'CONTRADICTS', target: { id: t.recordId } });
    const items = await recall(member, `${s} stores sessions`);
    expect(items.find((i) => i.record.id === t.recordId)?.contested).toBe(true);
  });

  it('a CONFIDENTIAL change does not close the INTERNAL record its readers still rely on', async () => {
    const s = `queue-${word()}`;
    const t = await propose(root, fact('acme/eng', 'INTERNAL', s, 'runs on', 'rabbitmq'));
    const n = await propose(
      root,
      at(
        fact('acme/eng', 'CONFIDENTIAL', s, 'runs on', 'kafka'),
        `${s} now runs on kafka instead of rabbitmq.`,
      ),
    );
    expect(n.outcome).toBe('ADMITTED');
    await attack('supersede through a hidden record', async () => {
      const seen = (await read(eve, t.recordId!))!;
      expect(seen.status).toBe('ACTIVE');
      expect(seen.history).toHaveLength(1);
      expect((await recall(eve, `${s} runs on`)).map((i) => i.record.id)).toContain(t.recordId);
    });
    // control: a change at the same label supersedes (another subject: not a near-duplicate of the above)
    const l = `ledger-${word()}`;
    const t2 = await propose(root, fact('acme/eng', 'INTERNAL', l, 'is hosted on', 'aws'));
    const n2 = await propose(
      root,
      at(fact('acme/eng', 'INTERNAL', l, 'is hosted on', 'gcp'), `${l} is now hosted on gcp instead.`),
    );
    expect(n2.outcome).toBe('SUPERSEDED');
    expect((await read(eve, t2.recordId!))!.status).toBe('SUPERSEDED');
  });

  it('a member cannot contest or supersede what it cannot see, and the receipt is the one for nothing there', async () => {
    const s = `payroll-${word()}`;
    const hiddenOne = await propose(root, fact('acme/eng', 'CONFIDENTIAL', s, 'runs on', 'sap'));
    await attack('contest a hidden record', async () => {
      const mine = await propose(
        eve,
        at(fact('acme/eng', 'PUBLIC', s, 'runs on', 'excel'), `${s} now runs on excel instead.`),
      );
      // the same kind of statement about a subject nobody wrote about before
      const t = `timesheets-${word()}`;
      const control = await propose(
        eve,
        at(fact('acme/eng', 'PUBLIC', t, 'are kept in', 'excel'), `${t} are now kept in excel instead.`),
      );
      const seen = ({ outcome, version, reason }: Receipt) => ({ outcome, version, reason });
      expect(seen(mine)).toEqual(seen(control));
      expect(seen(mine)).toEqual({ outcome: 'ADMITTED', version: 1, reason: null });
      const h = (await read(root, hiddenOne.recordId!))!;
      expect(h.status).toBe('ACTIVE');
      expect(h.relations).toEqual([]);
    });
  });

  it('a hidden duplicate does not reinforce the visible record', async () => {
    const s = `secrets-${word()}`;
    const t = await propose(root, fact('acme/eng', 'INTERNAL', s, 'uses', 'vault'));
    const before = (await read(eve, t.recordId!))!;
    const d = await propose(root, fact('acme/eng', 'CONFIDENTIAL', s, 'uses', 'vault'));
    expect(d.outcome).not.toBe('REINFORCED');
    await attack('reinforce through a hidden duplicate', async () => {
      const after = (await read(eve, t.recordId!))!;
      expect(after).toMatchObject({
        reinforcements: 0,
        confidence: before.confidence,
        sources: before.sources,
      });
    });
    // control: a duplicate its readers may read reinforces
    expect((await propose(root, fact('acme/eng', 'PUBLIC', s, 'uses', 'vault'))).outcome).toBe('REINFORCED');
  });
});

describe("finding 5: the shared topic's offsets only for admins", () => {
  it('a member sees whether the projector is healthy, not offsets or lag; an admin sees both', async () => {
    type P = { projection: { healthy: boolean; totalLag: number | null; partitions: unknown[] } };
    await attack('projection offsets as a member', async () => {
      const r = await app.gql<P>(member, PROJECTION);
      expect(r.errors).toBeUndefined();
      expect(r.data!.projection).toEqual({ healthy: true, totalLag: null, partitions: [] });
    });
    const a = await app.gql<P>(root, PROJECTION);
    expect(a.data!.projection.partitions.length).toBeGreaterThan(0);
    expect(typeof a.data!.projection.totalLag).toBe('number');
  });
});

describe('replay', () => {
  it('folding the ledger again gives the same grants (revoked ones kept), statuses and access', async () => {
    const replay = new MemoryState();
    await app.m.ledger.readAll(async (b) => {
      for (const m of b.messages) {
        const d = m.value ? await app.m.decode(m.value) : null;
        if (d?.ok) replay.apply(d.event);
      }
    }, 500);
    const changed = replay.changes();
    const grants = changed.grants.filter((g) => g.tenant === tenant);
    const key = (g: { id: string; grantee: string; namespace: string; revokedAt: string | null }) =>
      `${g.id} ${g.grantee} ${g.namespace} ${g.revokedAt}`;
    expect(grants.map(key).sort()).toEqual((await app.m.store.grants(tenant)).map(key).sort());
    expect(grants.filter((g) => g.revokedAt !== null)).toHaveLength(2);
    const all = await app.gql<{ records: { nodes: Array<{ id: string; status: string }> } }>(root, LIST, {
      f: {
        namespace: 'acme',
        statuses: ['CANDIDATE', 'ACTIVE', 'CONTESTED', 'SUPERSEDED', 'RETRACTED', 'REJECTED'],
      },
    });
    const stored = Object.fromEntries(all.data!.records.nodes.map((n) => [n.id, n.status]));
    const folded = Object.fromEntries(
      changed.records
        .filter((r) => r.tenant === tenant)
        .map((r) => [r.id, r.revisions[r.revisions.length - 1]!.status]),
    );
    expect(folded).toEqual(stored);
    const mallory = {
      iss: ISS(),
      sub: 'mallory',
      tenant,
      scopes: new Set(['read' as const]),
      actors: [],
      tokenId: undefined,
      expiresAt: undefined,
    };
    expect(effectiveGrants(mallory, undefined, grants, app.config.access, false)).toEqual([]);
  });
});
