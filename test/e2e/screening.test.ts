import { createHash, createHmac, randomInt, randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { getNamedType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/adapters/logger.ts';
import { COMMAND_INPUTS, type CommandName } from '../../src/ingest/screen-command.ts';
import {
  freshTenant,
  PROPOSE,
  RETRACT,
  REVISE,
  startApp,
  type GqlResult,
  type TestApp,
} from '../support/harness.ts';
import { graphSearch, openedLedger, rawTopic } from '../support/leak-check.ts';
import { inputArg, LEAVES, withLeaf } from '../support/mutation-inputs.ts';
import { OBFUSCATED_INJECTIONS, secretSamples, type SecretSample } from '../support/secret-corpus.ts';

/**
 * Issue 9, end to end on the real stack: the 26 secret kinds in every field of every mutation (the fields
 * found by walking schema.graphql), stored flows through every free-text field, conflicts, and injection
 * text hidden by zero-width characters, homoglyphs and fullwidth forms. Afterwards no secret is anywhere:
 * not in a full Neo4j dump, not in the raw ledger and dead-letter topics, not in the server's log, not in
 * any answer (errors included). The secrets are generated per run, so a hit can only come from this run.
 */
const suffix = randomUUID().slice(0, 8);
const topic = `muninn.test.screening.${suffix}`;
const FP_KEY = `fp-e2e-${randomUUID()}`;
const SAMPLES = secretSamples(randomInt(1, 2 ** 31));
const ns = 'acme/screen';

const INGEST = `mutation I($input: EpisodeInput!) { ingestEpisode(input: $input) { outcome recordId reason } }`;
const REJECT = `mutation J($input: RejectInput!) { reject(input: $input) { outcome recordId version reason } }`;
const GRANT = `mutation G($input: GrantAccessInput!) { grantAccess(input: $input) { outcome grantId reason } }`;
const REVOKE = `mutation V($input: RevokeAccessInput!) { revokeAccess(input: $input) { outcome grantId } }`;
const RECORDS = `query R($f: RecordFilter!) { records(filter: $f, first: 200) { nodes { id status flags
  statement { text } sources { label } } } }`;
const HISTORY = `query H($id: ID!) { history(id: $id) { status reason statement { text } } }`;
const RECALL = `query Q($input: RecallInput!) { recall(input: $input) { envelope items { record { id } } } }`;

type Receipt = { outcome: string; recordId: string | null; version: number | null; reason: string | null };

let app: TestApp;
let admin: string;
let prober: string;
const logs: string[] = [];
/** Every answer the API gave in this file, errors included, as JSON. */
const answers: string[] = [];

async function call<T>(token: string, query: string, variables: Record<string, unknown>) {
  const r = await app.gql<T>(token, query, variables);
  answers.push(JSON.stringify(r));
  return r;
}

/** Run `fn` over `items`, at most `n` at a time (the API and the stack share two cores). */
async function pool<T, R>(items: readonly T[], n: number, fn: (x: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i]!, i);
  };
  await Promise.all(Array.from({ length: n }, worker));
  return out;
}

const code = (r: GqlResult<unknown>): string | undefined => r.errors?.[0]?.extensions?.['code'] as string;

beforeAll(async () => {
  const stream = new PassThrough();
  stream.on('data', (b: Buffer) => logs.push(b.toString()));
  app = await startApp(
    {
      MUNINN_LEDGER_TOPIC: topic,
      MUNINN_DLQ_TOPIC: `${topic}.dlq`,
      MUNINN_PROJECTOR_GROUP: `screening-${suffix}`,
      MUNINN_FINGERPRINT_KEY: FP_KEY,
      MUNINN_EMBEDDER: 'hashing',
      // The stack shares two cores with other work: wait longer for the projection than the default.
      MUNINN_AWAIT_TIMEOUT_MS: '60000',
    },
    createLogger('debug', 'muninn', stream),
  );
  const tenant = freshTenant('screen');
  const scopes = ['read', 'write', 'review', 'admin'];
  admin = await app.token({ tenant, sub: 'alice', scopes });
  prober = await app.token({ tenant, sub: 'prober', scopes });
});
afterAll(() => app?.stop());

describe('every string field of every mutation, with each of the 26 secret kinds', () => {
  /** Outcomes by the field's rule, per secret: "key refusedByScreen" … (printed for the README's figures). */
  const byRule = new Map<string, number>();
  const leaks: string[] = [];
  const wrong: string[] = [];
  let tried = 0;
  let seconds = 0;

  beforeAll(async () => {
    const t0 = performance.now();
    // An identifier is tried once per kind (the first secret refuses the command, hiding the others); free
    // text and format-checked values (enums, instants, handles) carry all 26 at once, which also checks that
    // one answer echoing many values redacts every one.
    const ALL = SAMPLES.map((s) => s.text).join('\n');
    const cases = LEAVES.flatMap(({ leaf, sample, name }) =>
      leaf.rule === 'name' || leaf.rule === 'key'
        ? SAMPLES.map((s) => ({ leaf, sample, name, text: s.text, samples: [s] }))
        : [{ leaf, sample, name, text: ALL, samples: SAMPLES }],
    );
    await pool(cases, 8, async ({ leaf, sample, name, text, samples }) => {
      const m = leaf.mutation;
      const named = getNamedType(inputArg(m));
      // Receipts differ by mutation (an erasure's is not a write receipt): ask only for the type name, and
      // skip the projection wait where the input has one.
      const async = 'getFields' in named && 'await' in named.getFields() ? { await: false } : {};
      const r = await call(
        prober,
        `mutation M($input: ${named.name}!) { ${m}(input: $input) { __typename } }`,
        {
          input: { ...withLeaf(sample, leaf, text), ...async },
        },
      );
      const answer = JSON.stringify(r);
      const c = code(r);
      const outcome =
        c === 'BAD_USER_INPUT' && r.errors![0]!.extensions!['secretKinds']
          ? 'refusedByScreen'
          : c === 'BAD_USER_INPUT'
            ? 'refusedByFormat'
            : c === 'NOT_FOUND'
              ? 'notFound'
              : r.errors
                ? `error ${c}`
                : 'accepted';
      for (const s of samples) {
        tried++;
        if (answer.includes(s.secret)) leaks.push(`${name} ${s.kind}`);
        const k = `${leaf.rule} ${outcome}`;
        byRule.set(k, (byRule.get(k) ?? 0) + 1);
      }
      // An identifier holding a secret never gets through; free text may (it is stored redacted).
      if ((leaf.rule === 'name' || leaf.rule === 'key') && c !== 'BAD_USER_INPUT')
        wrong.push(`${name} ${samples[0]!.kind}: ${c ?? 'accepted'}`);
    });
    seconds = Math.round((performance.now() - t0) / 100) / 10;
  }, 300_000);

  it('answers none of them with the secret, and refuses every identifier that holds one', () => {
    expect(tried).toBe(LEAVES.length * 26);
    expect(leaks).toEqual([]);
    expect(wrong).toEqual([]);
    const count = (k: string) => byRule.get(k) ?? 0;
    const ids = LEAVES.filter(({ leaf }) => leaf.rule === 'name' || leaf.rule === 'key').length * 26;
    const refused = ['name', 'key'].flatMap((r) => [`${r} refusedByScreen`, `${r} refusedByFormat`]);
    expect(refused.reduce((n, k) => n + count(k), 0)).toBe(ids);
    // Most identifiers reach the screen (a few are refused earlier by their format or length).
    expect(count('name refusedByScreen') + count('key refusedByScreen')).toBeGreaterThan(ids / 2);
    process.stdout.write(
      `screening e2e: ${LEAVES.length} string fields x 26 kinds = ${tried} cases in ${seconds} s; by rule and outcome: ` +
        `${JSON.stringify(Object.fromEntries([...byRule].sort()))}\n`,
    );
  });
});

describe('free text through every stored path', () => {
  const facts: string[] = [];
  /** The samples in two halves, so that each fits a 2,000-character reason. */
  const halves = [SAMPLES.filter((_, i) => i % 2 === 0), SAMPLES.filter((_, i) => i % 2 === 1)];
  const joined = (half: readonly SecretSample[]) => half.map((s) => s.text).join('\n');

  beforeAll(async () => {
    const t0 = performance.now();
    for (const h of halves) expect(joined(h).length).toBeLessThan(1900);
    // One proposal per kind with it in every text field (statement, rationale, ext values).
    await pool(SAMPLES, 6, async (s, i) => {
      const fact = await call<{ propose: Receipt }>(admin, PROPOSE, {
        input: {
          namespace: `${ns}/facts`,
          class: 'FACT',
          statement: {
            subject: `service-${i} ${s.text}`,
            predicate: s.text.length <= 200 ? s.text : 'is configured with',
            object: `the vault ${s.text}`,
            text: `Service ${i} is configured with ${s.text}`,
          },
          rationale: `found in the runbook: ${s.text}`,
          ext: { 'x:doc': { title: s.text, tags: [s.text] } },
          purpose: 'test',
          idempotencyKey: `fact-${suffix}-${i}`,
        },
      });
      expect(fact.errors, s.kind).toBeUndefined();
      expect(fact.data!.propose.version, `${s.kind}: projected`).toBe(1);
      facts[i] = fact.data!.propose.recordId!;
    });
    // Each half of the kinds through a revision, a retraction, a rejection, a grant and a revocation.
    await pool(halves, 2, async (half, h) => {
      const all = joined(half);
      const revised = await call<{ revise: Receipt }>(admin, REVISE, {
        input: {
          id: facts[h],
          expectedVersion: 1,
          statement: {
            subject: `service-${h}`,
            predicate: 'rotated to',
            object: all,
            text: `Rotated to ${all}`,
          },
          purpose: 'test',
          idempotencyKey: `revise-${suffix}-${h}`,
        },
      });
      expect(revised.errors).toBeUndefined();
      const retracted = await call(admin, RETRACT, {
        input: {
          id: facts[h],
          expectedVersion: 2,
          reason: `leaked: ${all}`,
          idempotencyKey: `retract-${suffix}-${h}`,
        },
      });
      expect(retracted.errors).toBeUndefined();
      const norm = await call<{ propose: Receipt }>(admin, PROPOSE, {
        input: {
          namespace: `${ns}/norms`,
          class: 'NORMATIVE',
          // One subject per half: the halves run at once, and the second of two identical triples would
          // reinforce the first's candidate (REINFORCED) whenever the first was projected before it.
          statement: {
            subject: `deploys-${h}`,
            predicate: 'must use',
            object: 'the key',
            text: `Deploy with ${all}`,
          },
          rationale: `policy ${all}`,
          purpose: 'test',
          idempotencyKey: `norm-${suffix}-${h}`,
        },
      });
      expect(norm.data?.propose.outcome).toBe('QUEUED');
      const rejected = await call(admin, REJECT, {
        input: { proposalId: norm.data!.propose.recordId, reason: `contains ${all}` },
      });
      expect(rejected.errors).toBeUndefined();
      const grant = await call<{ grantAccess: { grantId: string } }>(admin, GRANT, {
        input: {
          grantee: { sub: `agent-${h}` },
          namespace: ns,
          maxSensitivity: 'INTERNAL',
          reason: `ticket says ${all}`,
          idempotencyKey: `grant-${suffix}-${h}`,
        },
      });
      expect(grant.errors).toBeUndefined();
      const revoked = await call(admin, REVOKE, {
        input: { grantId: grant.data!.grantAccess.grantId, reason: `rotated ${all}` },
      });
      expect(revoked.errors).toBeUndefined();
    });

    const episode = await call<{ ingestEpisode: Receipt[] }>(admin, INGEST, {
      input: {
        namespace: `${ns}/episode`,
        source: 'transcript',
        occurredAt: '2026-11-02T10:00:00Z',
        purpose: 'test',
        idempotencyKey: `episode-${suffix}`,
        turns: [
          ...SAMPLES.map((s, i) => ({
            role: 'user',
            speaker: 'alice',
            text: `Use this: ${s.text}`,
            label: `s${i}`,
          })),
          ...OBFUSCATED_INJECTIONS.map((o, j) => ({
            role: 'user',
            speaker: 'mallory',
            text: o.text,
            label: `o${j}`,
          })),
        ],
      },
    });
    expect(episode.errors).toBeUndefined();
    const seconds = Math.round((performance.now() - t0) / 100) / 10;
    process.stdout.write(
      `screening e2e: stored paths (26 proposals, 12 commands, 1 episode) in ${seconds} s\n`,
    );
  }, 300_000);

  it('keeps the text around each secret, with a keyed ref in its place', async () => {
    const h = await call<{
      history: Array<{ status: string; reason: string | null; statement: { text: string } }>;
    }>(admin, HISTORY, { id: facts[0] });
    const [first, revised, retracted] = h.data!.history;
    expect(h.data!.history).toHaveLength(3);
    const ref = (kind: string) => `\\[secret:${kind}:[0-9a-f]{8}\\]`;
    expect(first!.statement.text).toMatch(
      new RegExp(`^Service 0 is configured with .*${ref(SAMPLES[0]!.kind)}`),
    );
    for (const s of halves[0]!) {
      expect(revised!.statement.text, s.kind).toMatch(new RegExp(ref(s.kind)));
      expect(retracted!.reason, s.kind).toMatch(new RegExp(ref(s.kind)));
    }
    expect(retracted!.status).toBe('RETRACTED');
    expect(retracted!.reason).toMatch(/^leaked: /);
  });

  it('names a secret by an HMAC under the deployment key, the same in every place it occurs', async () => {
    const gh = SAMPLES.find((s) => s.kind === 'github_token')!;
    const keyed = `[secret:github_token:${createHmac('sha256', FP_KEY).update(gh.secret).digest('hex').slice(0, 8)}]`;
    const plain = `[secret:github_token:${createHash('sha256').update(gh.secret).digest('hex').slice(0, 8)}]`;
    const ledger = await rawTopic(app.config.kafka.brokers, topic);
    // Statements, reasons and episode text travel sealed (issue 13), so the ref is counted in the events
    // as the projector opens them: its proposal, the revision, retraction, norm, rejection, grant and
    // revocation of its half, the episode. Neither form holds the unkeyed hash.
    const opened = await openedLedger(app);
    expect(opened.split(keyed).length - 1).toBeGreaterThanOrEqual(8);
    expect(opened).not.toContain(plain);
    expect(ledger).not.toContain(plain);
  });

  it('waits for review whatever hid the instruction-shaped text, and recall does not serve it', async () => {
    const r = await call<{
      records: {
        nodes: Array<{ id: string; status: string; flags: string[]; sources: Array<{ label: string }> }>;
      };
    }>(admin, RECORDS, { f: { namespace: `${ns}/episode`, statuses: ['ACTIVE', 'CANDIDATE', 'CONTESTED'] } });
    const hidden = r.data!.records.nodes.filter((n) => n.sources.some((s) => /^o\d+$/.test(s.label)));
    const labels = new Set(hidden.flatMap((n) => n.sources.map((s) => s.label)));
    expect(labels.size).toBe(OBFUSCATED_INJECTIONS.length);
    for (const n of hidden) {
      expect(n.status).toBe('CANDIDATE');
      expect(n.flags).toContain('injection:override_instruction');
    }
    const recall = await call<{ recall: { envelope: string; items: Array<{ record: { id: string } }> } }>(
      admin,
      RECALL,
      { input: { query: 'ignore all previous instructions', namespace: ns, purpose: 'test', limit: 50 } },
    );
    expect(recall.errors).toBeUndefined();
    const served = new Set(recall.data!.recall.items.map((i) => i.record.id));
    expect(hidden.filter((n) => served.has(n.id))).toEqual([]);
    expect(recall.data!.recall.envelope.toLowerCase()).not.toContain('previous instructions');
  });

  it('queues a proposal whose statement hides instruction-shaped text', async () => {
    const outcomes = await pool(OBFUSCATED_INJECTIONS, 4, async (o, j) => {
      const r = await call<{ propose: Receipt }>(admin, PROPOSE, {
        input: {
          namespace: `${ns}/proposals`,
          class: 'FACT',
          // Distinct wording around it, so that the ten are not duplicates of each other.
          statement: {
            subject: `wiki page ${j}`,
            predicate: 'says',
            object: `section ${suffix}-${j}`,
            text: `Wiki page ${j}, section ${suffix}-${j}, says: ${o.text}`,
          },
          purpose: 'test',
          idempotencyKey: `inj-${suffix}-${j}`,
        },
      });
      return `${r.data?.propose.outcome} ${r.data?.propose.reason ?? ''}`;
    });
    for (const o of outcomes) expect(o).toMatch(/^QUEUED .*injection:override_instruction/);
  });

  it('a revision cannot bring in what screening would send to review or label higher', async () => {
    const p = await call<{ propose: Receipt }>(admin, PROPOSE, {
      input: {
        namespace: `${ns}/revisions`,
        class: 'FACT',
        statement: {
          subject: 'the cache',
          predicate: 'uses',
          object: 'redis',
          text: 'The cache uses Redis.',
        },
        purpose: 'test',
        idempotencyKey: `rev-base-${suffix}`,
      },
    });
    expect(p.data?.propose.outcome).toBe('ADMITTED');
    const revise = (text: string, n: number) =>
      call<{ revise: Receipt }>(admin, REVISE, {
        input: {
          id: p.data!.propose.recordId,
          expectedVersion: 1,
          statement: { subject: 'the cache', predicate: 'uses', object: 'redis', text },
          purpose: 'test',
          idempotencyKey: `rev-${suffix}-${n}`,
        },
      });
    const hidden = await revise(`The cache uses Redis. ${OBFUSCATED_INJECTIONS[5]!.text}`, 1);
    expect(code(hidden)).toBe('BAD_USER_INPUT');
    expect(hidden.errors![0]!.extensions!['flags']).toEqual(['injection:override_instruction']);
    const pii = await revise('The cache is run by alice@example.com.', 2);
    expect(code(pii)).toBe('BAD_USER_INPUT');
    expect(pii.errors![0]!.message).toMatch(/needs the label CONFIDENTIAL/);
    const plain = await revise('The cache uses Redis 7.', 3);
    expect(plain.data?.revise.outcome).toBe('REVISED');
  });

  it('a CONFLICT never echoes the input that caused it', async () => {
    const [a, b] = SAMPLES;
    const input = (s: SecretSample) => ({
      namespace: `${ns}/conflicts`,
      class: 'FACT',
      statement: { subject: 'cache', predicate: 'uses', object: 'redis', text: `Cache uses ${s.text}` },
      purpose: 'test',
      idempotencyKey: `conflict-${suffix}`,
    });
    const first = await call<{ propose: Receipt }>(admin, PROPOSE, { input: input(a!) });
    expect(first.errors).toBeUndefined();
    const id = first.data!.propose.recordId;
    const again = await call(admin, PROPOSE, { input: input(b!) });
    expect(code(again)).toBe('CONFLICT');
    const stale = await call(admin, REVISE, {
      input: {
        id,
        expectedVersion: 2,
        statement: { subject: 'x', predicate: 'y', object: 'z', text: `stale ${b!.text}` },
        purpose: 'test',
        idempotencyKey: `stale-${suffix}`,
      },
    });
    expect(code(stale)).toBe('CONFLICT');
    for (const r of [again, stale])
      for (const s of [a!, b!]) expect(JSON.stringify(r)).not.toContain(s.secret);
  });
});

describe('afterwards, no secret is anywhere', () => {
  const found = (text: string): string[] => SAMPLES.filter((s) => text.includes(s.secret)).map((s) => s.kind);

  it('not in a full dump of the graph (every node and relationship property)', async () => {
    const markers = SAMPLES.map((s) => `[secret:${s.kind}:`);
    const graph = await graphSearch(app, [...markers, ...SAMPLES.map((s) => s.secret)]);
    for (const [i, s] of SAMPLES.entries()) expect(graph.found, s.kind).toContain(markers[i]);
    expect(SAMPLES.filter((s) => graph.found.includes(s.secret)).map((s) => s.kind)).toEqual([]);
  });

  it('not in the raw ledger or dead-letter topic', async () => {
    const ledger = await rawTopic(app.config.kafka.brokers, topic);
    for (const t of [
      'RecordProposed',
      'RecordRevised',
      'RecordRetracted',
      'ProposalRejected',
      'AccessRevoked',
      'EpisodeStored',
    ])
      expect(ledger).toContain(t);
    expect(found(ledger)).toEqual([]);
    expect(found(await rawTopic(app.config.kafka.brokers, `${topic}.dlq`))).toEqual([]);
  });

  it("not in the server's log, nor in any answer it gave", () => {
    const log = logs.join('');
    expect(log).toContain('appended');
    expect(found(log)).toEqual([]);
    expect(answers.length).toBeGreaterThan(LEAVES.length);
    expect(found(answers.join('\n'))).toEqual([]);
  });

  it('covers every mutation', () => {
    expect(new Set(LEAVES.map((l) => l.leaf.mutation))).toEqual(
      new Set(Object.keys(COMMAND_INPUTS) as CommandName[]),
    );
  });
});
