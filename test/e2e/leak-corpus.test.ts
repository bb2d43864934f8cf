import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { covers, effectiveGrants } from '../../src/domain/access.ts';
import type { GrantState } from '../../src/domain/fold.ts';
import {
  namespaceChain,
  RecordStatuses,
  Sensitivities,
  type RecordStatus,
  type Sensitivity,
} from '../../src/domain/model.ts';
import type { ScopeGrant } from '../../src/domain/policy.ts';
import type { Principal } from '../../src/domain/principal.ts';
import { freshTenant, PROPOSE, RETRACT, startApp, type TestApp } from '../support/harness.ts';

/**
 * The leak corpus: hundreds of generated cases over tenants, namespaces, labels, purposes, statuses and
 * validity windows. For every case the oracle — the ground truth read back with an admin token, filtered
 * by the pure entitlement model of src/domain/access.ts — says what the caller may see; recall, records,
 * counts, relations and `why` must never name anything else (records must name exactly that). Then
 * records a caller may not see are added, and the caller's ranking must not move.
 */

const GRANT = `mutation G($input: GrantAccessInput!) { grantAccess(input: $input) { outcome grantId reason } }`;
const REVOKE = `mutation V($input: RevokeAccessInput!) { revokeAccess(input: $input) { outcome grantId reason } }`;
const APPROVE = `mutation A($input: ApproveInput!) { approve(input: $input) { outcome recordId version reason } }`;
const REJECT = `mutation J($input: RejectInput!) { reject(input: $input) { outcome recordId version reason } }`;
const GRANTS = `{ grants { id grantee namespace maxSensitivity purposes revokedAt } }`;
const TRUTH = `query T($f: RecordFilter!) { records(filter: $f, first: 500) {
  totalCount pageInfo { hasNextPage }
  nodes { id namespace sensitivity status validFrom validTo statement { subject } } } }`;
// 100 a page (not 500): with relations the query's cost would otherwise exceed the API's limit.
const LIST = `query L($f: RecordFilter!, $asOf: AsOf, $after: String) {
  records(filter: $f, asOf: $asOf, first: 100, after: $after) {
    totalCount pageInfo { hasNextPage endCursor }
    nodes { id relations { type target { id } } } } }`;
const RECALL = `query R($input: RecallInput!) { recall(input: $input) {
  items { score record { id relations { type target { id } } } why { overrode contestedWith } } } }`;

type Receipt = { outcome: string; recordId: string | null; version: number | null; reason: string | null };
type TruthRecord = {
  id: string;
  namespace: string;
  sensitivity: Sensitivity;
  status: RecordStatus;
  validFrom: string;
  validTo: string | null;
  statement: { subject: string };
};
type Relations = Array<{ type: string; target: { id: string } | null }>;
type ListPage = {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  nodes: Array<{ id: string; relations: Relations }>;
};
type RecallItem = {
  score: number;
  record: { id: string; relations: Relations };
  why: { overrode: Array<{ id: string; rule: string }>; contestedWith: string[] };
};

const DAY = 86_400_000;
const T0 = Date.now();
const iso = (ms: number) => new Date(ms).toISOString();

const NAMESPACES = ['acme', 'acme/a', 'acme/a/x', 'acme/b', 'acme/b/y', 'globex'] as const;
const QUERY_NAMESPACES = ['acme', 'acme/a', 'acme/a/x', 'acme/b/y', 'globex'] as const;
const PURPOSES = ['code-change', 'incident', 'customer-reply'] as const;
const VARIANTS = ['current', 'future', 'expired', 'retracted'] as const;
type Variant = (typeof VARIANTS)[number];
/** World times recall and records are asked about: now, inside the expired window, after `future` begins. */
const VALID_AT = {
  now: undefined,
  past: iso(T0 - 90 * DAY),
  future: iso(T0 + 400 * DAY),
} as const;
type ValidAtKey = keyof typeof VALID_AT;

const QUERIES = [
  'deploy pipeline canary postgres backup',
  'how do we restore a postgres backup after an incident',
  'canary rollout latency alerts on the deploy pipeline',
  'rotate secrets after a postgres failover',
];

// ── seeded text: a shared vocabulary (so queries match many records), one template and one clause per
// record (so no two records are near-duplicates), and a distinct name ──────────────────────────────────
const TEMPLATES: Array<(n: string) => string> = [
  (n) => `The ${n} service deploys through the canary pipeline before touching postgres.`,
  (n) => `Nightly postgres backup for ${n} is verified by restoring it into a staging replica.`,
  (n) => `During a ${n} rollout the pipeline pauses the canary when latency climbs.`,
  (n) => `When ${n} pages on-call, the incident runbook says to freeze deploys and check the backup.`,
  (n) => `Schema migrations in ${n} run in the deploy pipeline after a postgres snapshot.`,
  (n) => `${n} keeps its cache warm during canary deploys so postgres is not overloaded.`,
  (n) => `The ${n} team rotates database secrets after every postgres failover drill.`,
  (n) => `Backups of ${n} are encrypted, shipped off-site and pruned after ninety days.`,
  (n) => `The ${n} pipeline blocks a deploy when the canary cohort shows more than one percent errors.`,
  (n) => `For ${n}, retries in the queue consumer back off exponentially up to a minute.`,
  (n) => `${n} alerts fire when replica lag on postgres exceeds thirty seconds.`,
  (n) => `Audit logs of ${n} record who approved each production deploy and backup restore.`,
];
const CLAUSES = [
  'Owners review it every quarter.',
  'This was agreed after the March outage.',
  'It applies to the eu-west region only.',
  'Exceptions need a written sign-off from the lead.',
  'It is tracked on the reliability dashboard.',
  'New joiners learn it in their first week.',
  'The setting lives in the shared terraform module.',
  'Staging mirrors it with smaller limits.',
  'Nobody has touched it since the big rewrite.',
  'The pager rota mentions it on every handover.',
];
const STARS = ['orion', 'vega', 'lyra', 'draco', 'cygnus', 'pavo', 'auriga', 'carina', 'hydra', 'lepus'];
const COLOURS = ['amber', 'cobalt', 'jade', 'ochre', 'scarlet', 'teal', 'umber', 'violet', 'ivory', 'slate'];
const CLASSES = ['FACT', 'PROCEDURE', 'CONSTRAINT', 'FACT', 'PREFERENCE', 'DECISION'] as const;
const nameOf = (i: number) => `${STARS[i % 10]}-${COLOURS[Math.floor(i / 10) % 10]}`;
const textOf = (i: number) =>
  `${TEMPLATES[i % TEMPLATES.length]!(nameOf(i))} ${CLAUSES[Math.floor(i / TEMPLATES.length) % CLAUSES.length]}`;

let app: TestApp;
let ISS: string;
const tenants = { T: '', U: '' };
const admins = { T: '', U: '' };
const truth: Record<'T' | 'U', TruthRecord[]> = { T: [], U: [] };
const seededIds = new Set<string>();
const outcomes: Record<string, number> = {};
let held: GrantState[] = [];
let seedMs = 0;

// ── helpers ───────────────────────────────────────────────────────────────────────────────────────────

async function inBatches<T, R>(xs: readonly T[], size: number, fn: (x: T, i: number) => Promise<R>) {
  const out: R[] = [];
  for (let i = 0; i < xs.length; i += size)
    out.push(...(await Promise.all(xs.slice(i, i + size).map((x, j) => fn(x, i + j)))));
  return out;
}

async function mutate(token: string, doc: string, field: string, input: Record<string, unknown>) {
  const r = await app.gql<Record<string, Receipt>>(token, doc, { input });
  expect(r.errors, `${field} ${JSON.stringify(input)}`).toBeUndefined();
  const receipt = r.data![field]!;
  outcomes[`${field}:${receipt.outcome}`] = (outcomes[`${field}:${receipt.outcome}`] ?? 0) + 1;
  return receipt;
}

interface Seed {
  readonly tenant: 'T' | 'U';
  readonly namespace: string;
  readonly sensitivity: Sensitivity;
  readonly class?: string;
  readonly subject: string;
  readonly predicate?: string;
  readonly object?: string;
  readonly text: string;
  readonly validFrom?: string;
  readonly validTo?: string;
}

async function propose(s: Seed): Promise<Receipt> {
  const cls = s.class ?? 'FACT';
  const receipt = await mutate(admins[s.tenant], PROPOSE, 'propose', {
    namespace: s.namespace,
    class: cls,
    statement: {
      subject: s.subject,
      predicate: s.predicate ?? 'notes',
      object: s.object ?? `${s.subject}-note`,
      text: s.text,
    },
    sensitivity: s.sensitivity,
    ...(cls === 'DECISION' ? { rationale: 'Agreed by the owners.' } : {}),
    ...(s.validFrom ? { validFrom: s.validFrom } : {}),
    ...(s.validTo ? { validTo: s.validTo } : {}),
    purpose: 'seed',
    idempotencyKey: randomUUID(),
  });
  if (receipt.recordId) seededIds.add(receipt.recordId);
  return receipt;
}

const windowOf = (v: Variant, i: number): { validFrom?: string; validTo?: string } => {
  switch (v) {
    case 'current':
      // half began long ago (valid inside the `past` window), half recently (not valid then)
      return { validFrom: iso(T0 - (i % 2 === 0 ? 400 : 20) * DAY) };
    case 'future':
      return { validFrom: iso(T0 + 365 * DAY) };
    case 'expired':
      return { validFrom: iso(T0 - 400 * DAY), validTo: iso(T0 - 30 * DAY) };
    case 'retracted':
      return { validFrom: iso(T0 - 400 * DAY) };
  }
};

/** RESTRICTED proposals wait for review; these namespaces' are approved, the rest stay CANDIDATE. */
const APPROVED_RESTRICTED = new Set(['acme', 'acme/a/x', 'acme/b', 'globex']);

async function seedGrid(tenant: 'T' | 'U', variants: readonly Variant[], offset: number) {
  const cells = NAMESPACES.flatMap((namespace) =>
    Sensitivities.flatMap((sensitivity) => variants.map((variant) => ({ namespace, sensitivity, variant }))),
  );
  await inBatches(cells, 12, async (c, k) => {
    const i = offset + k;
    let r = await propose({
      tenant,
      namespace: c.namespace,
      sensitivity: c.sensitivity,
      class: CLASSES[i % CLASSES.length]!,
      subject: `${tenant}-${nameOf(i)}-${i}`,
      text: textOf(i),
      ...windowOf(c.variant, i),
    });
    expect(['ADMITTED', 'QUEUED'], `seed ${i}: ${r.outcome} ${r.reason}`).toContain(r.outcome);
    if (r.outcome === 'QUEUED' && c.namespace === 'acme/b/y' && c.variant === 'future') {
      r = await mutate(admins[tenant], REJECT, 'reject', {
        proposalId: r.recordId,
        reason: 'not true',
        expectedVersion: r.version,
      });
    } else if (r.outcome === 'QUEUED' && APPROVED_RESTRICTED.has(c.namespace)) {
      r = await mutate(admins[tenant], APPROVE, 'approve', {
        proposalId: r.recordId,
        expectedVersion: r.version,
      });
    }
    if (c.variant === 'retracted') {
      await mutate(admins[tenant], RETRACT, 'retract', {
        id: r.recordId,
        expectedVersion: r.version,
        reason: 'no longer true',
        idempotencyKey: randomUUID(),
      });
    }
  });
}

/** One validFrom for both sides of some conflicts: no precedence rule decides them (both contested). */
const SAME_START = iso(T0 - 10 * DAY);

/** Conflicting statements, so that CONTESTED, SUPERSEDED, `overrode` and `contestedWith` all occur. */
async function seedConflicts() {
  const pairs: Array<[Seed, Seed]> = [
    // same namespace, different labels, same start: alice sees one side, member both (contestedWith)
    [
      {
        tenant: 'T',
        namespace: 'acme/a',
        sensitivity: 'INTERNAL',
        subject: 'checkout-service',
        predicate: 'stores sessions in',
        object: 'redis',
        text: 'Checkout service stores sessions in Redis behind the deploy pipeline.',
        validFrom: SAME_START,
      },
      {
        tenant: 'T',
        namespace: 'acme/a',
        sensitivity: 'CONFIDENTIAL',
        subject: 'checkout-service',
        predicate: 'stores sessions in',
        object: 'memcached',
        text: 'Checkout service stores sessions in Memcached since the canary rollout.',
        validFrom: SAME_START,
      },
    ],
    // ancestor vs descendant: the narrower one overrides in recall, for callers who see both
    [
      {
        tenant: 'T',
        namespace: 'acme',
        sensitivity: 'PUBLIC',
        class: 'CONSTRAINT',
        subject: 'billing-service',
        predicate: 'runs on',
        object: 'postgres 14',
        text: 'Billing service must run on Postgres 14 with a nightly backup.',
      },
      {
        tenant: 'T',
        namespace: 'acme/a',
        sensitivity: 'INTERNAL',
        class: 'CONSTRAINT',
        subject: 'billing-service',
        predicate: 'runs on',
        object: 'postgres 16',
        text: 'Billing service must run on Postgres 16 after the schema migration.',
      },
    ],
    // a change: the second supersedes the first
    [
      {
        tenant: 'T',
        namespace: 'acme/b',
        sensitivity: 'INTERNAL',
        subject: 'queue-service',
        predicate: 'runs on',
        object: 'rabbitmq',
        text: 'Queue service runs on RabbitMQ for deploy pipeline events.',
      },
      {
        tenant: 'T',
        namespace: 'acme/b',
        sensitivity: 'INTERNAL',
        subject: 'queue-service',
        predicate: 'runs on',
        object: 'kafka',
        text: 'Queue service now runs on Kafka instead of RabbitMQ for deploy pipeline events.',
      },
    ],
    // bob (PUBLIC there) sees one side, carol via bot-1 (CONFIDENTIAL there) both
    [
      {
        tenant: 'T',
        namespace: 'acme/a/x',
        sensitivity: 'PUBLIC',
        subject: 'x-worker',
        predicate: 'deploys with',
        object: 'the canary pipeline',
        text: 'The x worker deploys with the canary pipeline and a postgres backup first.',
        validFrom: SAME_START,
      },
      {
        tenant: 'T',
        namespace: 'acme/a/x',
        sensitivity: 'CONFIDENTIAL',
        subject: 'x-worker',
        predicate: 'deploys with',
        object: 'manual hotfixes',
        text: 'The x worker deploys with manual hotfixes that skip the canary on incidents.',
        validFrom: SAME_START,
      },
    ],
    // a narrower CONFIDENTIAL rule over a PUBLIC parent: bob (incident) sees both
    [
      {
        tenant: 'T',
        namespace: 'acme/b',
        sensitivity: 'PUBLIC',
        class: 'PROCEDURE',
        subject: 'pager-policy',
        predicate: 'escalates after',
        object: '15 minutes',
        text: 'The pager policy escalates an unacknowledged incident after 15 minutes.',
      },
      {
        tenant: 'T',
        namespace: 'acme/b/y',
        sensitivity: 'CONFIDENTIAL',
        class: 'PROCEDURE',
        subject: 'pager-policy',
        predicate: 'escalates after',
        object: '5 minutes',
        text: 'The pager policy escalates an unacknowledged incident on the y cluster after 5 minutes.',
      },
    ],
    // the same in tenant U
    [
      {
        tenant: 'U',
        namespace: 'acme/a',
        sensitivity: 'INTERNAL',
        subject: 'checkout-service',
        predicate: 'stores sessions in',
        object: 'redis',
        text: 'Checkout service stores sessions in Redis behind the deploy pipeline.',
        validFrom: SAME_START,
      },
      {
        tenant: 'U',
        namespace: 'acme/a',
        sensitivity: 'PUBLIC',
        subject: 'checkout-service',
        predicate: 'stores sessions in',
        object: 'dynamo',
        text: 'Checkout service stores sessions in DynamoDB since the canary rollout.',
        validFrom: SAME_START,
      },
    ],
  ];
  await Promise.all(
    pairs.map(async ([a, b]) => {
      await propose(a);
      await propose(b);
    }),
  );
}

async function readTruth(tenant: 'T' | 'U'): Promise<TruthRecord[]> {
  const out: TruthRecord[] = [];
  for (const namespace of ['acme', 'globex']) {
    const r = await app.gql<{
      records: { totalCount: number; pageInfo: { hasNextPage: boolean }; nodes: TruthRecord[] };
    }>(admins[tenant], TRUTH, { f: { namespace, statuses: [...RecordStatuses] } });
    expect(r.errors).toBeUndefined();
    expect(r.data!.records.pageInfo.hasNextPage).toBe(false);
    expect(r.data!.records.totalCount).toBe(r.data!.records.nodes.length);
    out.push(...r.data!.records.nodes);
  }
  return out;
}

// ── callers and the oracle ────────────────────────────────────────────────────────────────────────────

interface Caller {
  readonly name: string;
  readonly tenant: 'T' | 'U';
  readonly sub: string;
  readonly actor?: string;
  token: string;
}
const CALLERS: Caller[] = [
  { name: 'alice', tenant: 'T', sub: 'alice', token: '' },
  { name: 'bob', tenant: 'T', sub: 'bob', token: '' },
  { name: 'carol-via-bot-1', tenant: 'T', sub: 'carol', actor: 'bot-1', token: '' },
  { name: 'carol', tenant: 'T', sub: 'carol', token: '' },
  { name: 'dave', tenant: 'T', sub: 'dave', token: '' },
  { name: 'member', tenant: 'T', sub: 'member', token: '' },
  { name: 'outsider', tenant: 'U', sub: 'outsider', token: '' },
];
const caller = (name: string) => CALLERS.find((c) => c.name === name)!;

const principalOf = (c: Caller): Principal => ({
  iss: ISS,
  sub: c.sub,
  tenant: tenants[c.tenant],
  scopes: new Set(['read', 'write']),
  actors: c.actor ? [{ iss: ISS, sub: c.actor }] : [],
  tokenId: undefined,
  expiresAt: undefined,
});

/** The caller's effective read grants, by the same pure function the reference policy uses. */
const grantsOf = (c: Caller, purpose: string | undefined): ScopeGrant[] =>
  effectiveGrants(
    principalOf(c),
    purpose,
    held.filter((g) => g.tenant === tenants[c.tenant]),
    { defaultClearance: 'CONFIDENTIAL' },
    false,
  );

const rank = (s: Sensitivity) => Sensitivities.indexOf(s);
const entitled = (gs: readonly ScopeGrant[], r: TruthRecord) =>
  gs.some((g) => covers(g.root, r.namespace) && rank(r.sensitivity) <= rank(g.maxSensitivity));
const within = (ns: string, root: string) => ns === root || ns.startsWith(`${root}/`);
const validAt = (r: TruthRecord, at: string) =>
  Date.parse(r.validFrom) <= Date.parse(at) && (r.validTo === null || Date.parse(r.validTo) > Date.parse(at));
const byId = (c: Caller) => new Map(truth[c.tenant].map((r) => [r.id, r]));

/** What recall may return: entitled for the purpose, believed (ACTIVE/CONTESTED), valid then, in or above the namespace. */
function recallOracle(c: Caller, purpose: string, namespace: string, at: string): Set<string> {
  const gs = grantsOf(c, purpose);
  const chain = namespaceChain(namespace);
  return new Set(
    truth[c.tenant]
      .filter(
        (r) =>
          entitled(gs, r) &&
          (r.status === 'ACTIVE' || r.status === 'CONTESTED') &&
          validAt(r, at) &&
          (within(r.namespace, namespace) || chain.includes(r.namespace)),
      )
      .map((r) => r.id),
  );
}

/** What `records` must list exactly: purpose-free entitlement, the subtree, the statuses, the validity. */
function recordsOracle(
  c: Caller,
  namespace: string,
  statuses: readonly RecordStatus[] | undefined,
  at: string | undefined,
): Set<string> {
  const gs = grantsOf(c, undefined);
  const allowed: readonly RecordStatus[] =
    statuses ?? (at ? ['ACTIVE', 'CONTESTED', 'SUPERSEDED'] : ['ACTIVE', 'CONTESTED']);
  return new Set(
    truth[c.tenant]
      .filter(
        (r) =>
          entitled(gs, r) &&
          within(r.namespace, namespace) &&
          allowed.includes(r.status) &&
          (at === undefined || validAt(r, at)),
      )
      .map((r) => r.id),
  );
}

/** Every relation listed must lead to a record the caller may read (relations read without a purpose). */
function expectRelationsVisible(c: Caller, rels: Relations, label: string) {
  const gs = grantsOf(c, undefined);
  const known = byId(c);
  for (const rel of rels) {
    expect(rel.target, `${label}: a ${rel.type} relation to an invisible record is listed`).not.toBeNull();
    const t = known.get(rel.target!.id);
    expect(t && entitled(gs, t), `${label}: relation target ${rel.target!.id} not entitled`).toBe(true);
  }
}

const sorted = (xs: Iterable<string>) => [...xs].sort();

// ── setup ─────────────────────────────────────────────────────────────────────────────────────────────

async function grant(sub: string, namespace: string, maxSensitivity: Sensitivity, purposes: string[] | null) {
  const r = await app.gql<{ grantAccess: { outcome: string; grantId: string } }>(admins.T, GRANT, {
    input: {
      grantee: { sub },
      namespace,
      maxSensitivity,
      ...(purposes ? { purposes } : {}),
      reason: 'leak corpus',
      idempotencyKey: randomUUID(),
    },
  });
  expect(r.errors).toBeUndefined();
  expect(r.data!.grantAccess.outcome).toBe('ADMITTED');
  const g: GrantState = {
    tenant: tenants.T,
    id: r.data!.grantAccess.grantId,
    grantee: `${ISS}|${sub}`,
    namespace,
    maxSensitivity,
    purposes,
    grantedBy: `${ISS}|root`,
    grantedAt: new Date().toISOString(),
    revokedAt: null,
    revokeReason: null,
  };
  held.push(g);
  return g;
}

beforeAll(async () => {
  const t0 = performance.now();
  app = await startApp();
  ISS = app.config.auth.issuer;
  tenants.T = freshTenant('leak');
  tenants.U = freshTenant('leaku');
  admins.T = await app.token({ tenant: tenants.T, sub: 'root', scopes: ['admin'], ttlSeconds: 3600 });
  admins.U = await app.token({ tenant: tenants.U, sub: 'root', scopes: ['admin'], ttlSeconds: 3600 });

  // records: 6 namespaces × 4 labels × 4 validity variants in T; current and expired ones in U
  await Promise.all([
    seedGrid('T', VARIANTS, 0),
    seedGrid('U', ['current', 'expired'], NAMESPACES.length * Sensitivities.length * VARIANTS.length),
    seedConflicts(),
  ]);

  // grants
  await grant('alice', 'acme/a', 'INTERNAL', null);
  await grant('bob', 'acme/b', 'CONFIDENTIAL', ['incident']);
  await grant('bob', 'acme/a/x', 'PUBLIC', null);
  await grant('bot-1', 'acme/a/x', 'RESTRICTED', null);
  await grant('dave', 'acme', 'RESTRICTED', ['code-change']);
  const globex = await grant('dave', 'globex', 'PUBLIC', null);
  const v = await app.gql<{ revokeAccess: { outcome: string } }>(admins.T, REVOKE, {
    input: { grantId: globex.id, reason: 'moved teams' },
  });
  expect(v.errors).toBeUndefined();
  expect(v.data!.revokeAccess.outcome).toBe('ADMITTED');
  held = held.map((g) => (g.id === globex.id ? { ...g, revokedAt: new Date().toISOString() } : g));

  for (const c of CALLERS)
    c.token = await app.token({
      tenant: tenants[c.tenant],
      sub: c.sub,
      ttlSeconds: 3600,
      ...(c.actor ? { act: { sub: c.actor, iss: ISS } } : {}),
    });

  truth.T = await readTruth('T');
  truth.U = await readTruth('U');
  seedMs = performance.now() - t0;
  const hist = (rs: TruthRecord[], f: (r: TruthRecord) => string) =>
    rs.reduce<Record<string, number>>((m, r) => ((m[f(r)] = (m[f(r)] ?? 0) + 1), m), {});
  console.log(
    `leak corpus: seeded in ${(seedMs / 1000).toFixed(1)} s; T ${truth.T.length} records`,
    hist(truth.T, (r) => r.status),
    `U ${truth.U.length}`,
    hist(truth.U, (r) => r.status),
    'receipts',
    outcomes,
  );
});
afterAll(async () => app?.stop());

// ── the corpus ────────────────────────────────────────────────────────────────────────────────────────

describe('leak corpus', () => {
  it('the ground truth has every shape the corpus needs, and the grants are what the oracle assumes', async () => {
    // every seeded record is there, in the right tenant
    const all = new Set([...truth.T, ...truth.U].map((r) => r.id));
    for (const id of seededIds) expect(all.has(id), id).toBe(true);
    const statuses = new Set(truth.T.map((r) => r.status));
    for (const s of ['ACTIVE', 'CONTESTED', 'SUPERSEDED', 'RETRACTED', 'CANDIDATE', 'REJECTED'] as const)
      expect(statuses, s).toContain(s);
    const live = truth.T.filter((r) => r.status === 'ACTIVE' || r.status === 'CONTESTED');
    for (const s of Sensitivities)
      expect(
        live.some((r) => r.sensitivity === s),
        s,
      ).toBe(true);
    const now = new Date().toISOString();
    expect(live.some((r) => !validAt(r, now) && validAt(r, VALID_AT.past))).toBe(true); // expired
    expect(live.some((r) => !validAt(r, now) && validAt(r, VALID_AT.future))).toBe(true); // future
    expect(truth.U.length).toBeGreaterThan(0);

    // the service's grants are the oracle's
    const r = await app.gql<{
      grants: Array<{
        id: string;
        grantee: string;
        namespace: string;
        maxSensitivity: string;
        purposes: string[] | null;
        revokedAt: string | null;
      }>;
    }>(admins.T, GRANTS);
    expect(r.errors).toBeUndefined();
    const norm = (g: { id: string; grantee: string; namespace: string; maxSensitivity: string }) =>
      `${g.id} ${g.grantee} ${g.namespace} ${g.maxSensitivity}`;
    expect(sorted(r.data!.grants.map(norm))).toEqual(sorted(held.map(norm)));
    for (const g of r.data!.grants) {
      const mine = held.find((h) => h.id === g.id)!;
      expect(g.purposes).toEqual(mine.purposes);
      expect(g.revokedAt === null).toBe(mine.revokedAt === null);
    }

    // the effective grants, by hand
    expect(grantsOf(caller('alice'), undefined)).toEqual([{ root: 'acme/a', maxSensitivity: 'INTERNAL' }]);
    expect(grantsOf(caller('bob'), undefined)).toEqual([{ root: 'acme/a/x', maxSensitivity: 'PUBLIC' }]);
    expect(grantsOf(caller('bob'), 'incident')).toEqual([
      { root: 'acme/a/x', maxSensitivity: 'PUBLIC' },
      { root: 'acme/b', maxSensitivity: 'CONFIDENTIAL' },
    ]);
    expect(grantsOf(caller('carol-via-bot-1'), 'incident')).toEqual([
      { root: 'acme/a/x', maxSensitivity: 'CONFIDENTIAL' },
    ]);
    expect(grantsOf(caller('carol'), undefined)).toEqual([{ root: null, maxSensitivity: 'CONFIDENTIAL' }]);
    expect(grantsOf(caller('dave'), 'code-change')).toEqual([{ root: 'acme', maxSensitivity: 'RESTRICTED' }]);
    expect(grantsOf(caller('dave'), 'incident')).toEqual([]);
    expect(grantsOf(caller('dave'), undefined)).toEqual([]);
    expect(grantsOf(caller('outsider'), 'incident')).toEqual([
      { root: null, maxSensitivity: 'CONFIDENTIAL' },
    ]);
  });

  it('expected sets, checked literally (not through effectiveGrants)', async () => {
    const list = async (c: Caller, namespace: string) => {
      const r = await app.gql<{ records: { totalCount: number; nodes: Array<{ id: string }> } }>(
        c.token,
        `query L($f: RecordFilter!) { records(filter: $f, first: 500) { totalCount nodes { id } } }`,
        { f: { namespace } },
      );
      expect(r.errors).toBeUndefined();
      return r.data!.records;
    };
    const live = (r: TruthRecord) => r.status === 'ACTIVE' || r.status === 'CONTESTED';
    const ids = (rs: TruthRecord[]) => sorted(rs.map((r) => r.id));
    const expectList = async (c: Caller, namespace: string, want: TruthRecord[]) => {
      const got = await list(c, namespace);
      expect(sorted(got.nodes.map((n) => n.id)), `${c.name} ${namespace}`).toEqual(ids(want));
      expect(got.totalCount).toBe(want.length);
    };
    // alice: exactly the ACTIVE/CONTESTED PUBLIC and INTERNAL records under acme/a
    const alice = truth.T.filter(
      (r) =>
        live(r) &&
        (r.namespace === 'acme/a' || r.namespace === 'acme/a/x') &&
        (r.sensitivity === 'PUBLIC' || r.sensitivity === 'INTERNAL'),
    );
    expect(alice.length).toBeGreaterThan(4);
    await expectList(caller('alice'), 'acme', alice);
    // bob without a purpose: only acme/a/x PUBLIC (his acme/b grant is for incidents)
    await expectList(
      caller('bob'),
      'acme',
      truth.T.filter((r) => live(r) && r.namespace === 'acme/a/x' && r.sensitivity === 'PUBLIC'),
    );
    // carol via bot-1: acme/a/x up to CONFIDENTIAL (carol's default ∩ bot-1's grant)
    await expectList(
      caller('carol-via-bot-1'),
      'acme',
      truth.T.filter((r) => live(r) && r.namespace === 'acme/a/x' && r.sensitivity !== 'RESTRICTED'),
    );
    // dave: only a purpose-bound grant and a revoked one → nothing without a purpose, not even globex
    await expectList(caller('dave'), 'acme', []);
    await expectList(caller('dave'), 'globex', []);
    // member: the tenant up to CONFIDENTIAL
    await expectList(
      caller('member'),
      'globex',
      truth.T.filter((r) => live(r) && r.namespace === 'globex' && r.sensitivity !== 'RESTRICTED'),
    );
    // outsider: tenant U's own records only
    await expectList(
      caller('outsider'),
      'acme',
      truth.U.filter((r) => live(r) && r.namespace.startsWith('acme') && r.sensitivity !== 'RESTRICTED'),
    );
    // dave recalling for code-change: RESTRICTED records under acme are his; for an incident nothing
    const recallIds = async (c: Caller, purpose: string) => {
      const r = await app.gql<{ recall: { items: RecallItem[] } }>(c.token, RECALL, {
        input: { query: QUERIES[0], namespace: 'acme', purpose, limit: 50, tokenBudget: 20000 },
      });
      expect(r.errors).toBeUndefined();
      return r.data!.recall.items.map((i) => i.record.id);
    };
    const dave = await recallIds(caller('dave'), 'code-change');
    const restricted = new Set(
      truth.T.filter((r) => r.sensitivity === 'RESTRICTED' && r.namespace.startsWith('acme')).map(
        (r) => r.id,
      ),
    );
    expect(dave.some((id) => restricted.has(id))).toBe(true);
    expect(await recallIds(caller('dave'), 'incident')).toEqual([]);
  });

  it('≥ 300 generated cases: recall, records, counts, relations and why never name what the caller may not see', async () => {
    const t0 = performance.now();
    const counts = {
      recall: 0,
      records: 0,
      recordsAsOf: 0,
      recallItems: 0,
      listed: 0,
      overrode: 0,
      contestedWith: 0,
      relations: 0,
    };
    const failures: string[] = [];
    const fail = (msg: string) => {
      if (failures.length < 50) failures.push(msg);
    };

    // recall: callers × purposes × query namespaces × world times
    const recallCases = CALLERS.flatMap((c) =>
      PURPOSES.flatMap((purpose) =>
        QUERY_NAMESPACES.flatMap((namespace) =>
          (Object.keys(VALID_AT) as ValidAtKey[]).map((when) => ({ c, purpose, namespace, when })),
        ),
      ),
    );
    await inBatches(recallCases, 8, async ({ c, purpose, namespace, when }, i) => {
      const at = VALID_AT[when];
      const query = QUERIES[i % QUERIES.length]!;
      const r = await app.gql<{ recall: { items: RecallItem[] } }>(c.token, RECALL, {
        input: {
          query,
          namespace,
          purpose,
          recipe: 'hybrid',
          limit: 50,
          tokenBudget: 20000,
          ...(at ? { asOf: { validAt: at } } : {}),
        },
      });
      const label = `recall ${c.name} ${purpose} ${namespace} ${when} "${query}"`;
      expect(r.errors, label).toBeUndefined();
      const allowed = recallOracle(c, purpose, namespace, at ?? new Date().toISOString());
      const visible = new Set(
        truth[c.tenant].filter((t) => entitled(grantsOf(c, purpose), t)).map((t) => t.id),
      );
      const items = r.data!.recall.items;
      counts.recall++;
      counts.recallItems += items.length;
      const got = new Set<string>();
      for (const it of items) {
        got.add(it.record.id);
        if (!allowed.has(it.record.id)) fail(`${label}: returned ${it.record.id}`);
        counts.overrode += it.why.overrode.length;
        counts.contestedWith += it.why.contestedWith.length;
        counts.relations += it.record.relations.length;
        for (const o of it.why.overrode) {
          if (!allowed.has(o.id)) fail(`${label}: why.overrode names ${o.id}`);
          got.add(o.id);
        }
        for (const id of it.why.contestedWith)
          if (!visible.has(id)) fail(`${label}: why.contestedWith names ${id}`);
        expectRelationsVisible(c, it.record.relations, label);
      }
      // not vacuous: when the caller may see something here, recall gives it (with fewer than the vector
      // arm's k it returns every candidate; overridden ones are named by their winners)
      if (allowed.size > 0 && items.length === 0) fail(`${label}: nothing returned, ${allowed.size} allowed`);
      if (allowed.size < 50 && sorted(got).join() !== sorted(allowed).join())
        fail(`${label}: returned+overrode ${got.size} ≠ allowed ${allowed.size}`);
    });

    // records and totalCount: callers × namespaces × (default statuses, all statuses, default at past/future)
    const recordCases = CALLERS.flatMap((c) =>
      NAMESPACES.flatMap((namespace) =>
        (
          [
            { kind: 'records', statuses: undefined, at: undefined },
            { kind: 'records', statuses: RecordStatuses, at: undefined },
            { kind: 'recordsAsOf', statuses: undefined, at: VALID_AT.past },
            { kind: 'recordsAsOf', statuses: undefined, at: VALID_AT.future },
          ] as const
        ).map((v) => ({ c, namespace, ...v })),
      ),
    );
    await inBatches(recordCases, 8, async ({ c, namespace, kind, statuses, at }) => {
      const label = `records ${c.name} ${namespace} ${statuses ? 'all statuses' : 'default statuses'} ${at ?? ''}`;
      const want = recordsOracle(c, namespace, statuses, at);
      const listed: string[] = [];
      let after: string | null = null;
      for (let page = 0; page < 10; page++) {
        const r: { data: { records: ListPage } | null | undefined; errors: unknown } = await app.gql<{
          records: ListPage;
        }>(c.token, LIST, {
          f: { namespace, ...(statuses ? { statuses: [...statuses] } : {}) },
          ...(at ? { asOf: { validAt: at } } : {}),
          after,
        });
        expect(r.errors, label).toBeUndefined();
        const p = r.data!.records;
        if (p.totalCount !== want.size) fail(`${label}: totalCount ${p.totalCount} ≠ ${want.size}`);
        for (const n of p.nodes) {
          listed.push(n.id);
          counts.relations += n.relations.length;
          expectRelationsVisible(c, n.relations, label);
        }
        if (!p.pageInfo.hasNextPage) break;
        after = p.pageInfo.endCursor;
      }
      counts[kind]++;
      counts.listed += listed.length;
      const extra = listed.filter((id) => !want.has(id));
      const missing = [...want].filter((id) => !listed.includes(id));
      if (extra.length > 0) fail(`${label}: lists ${extra.length} it may not: ${extra.join(', ')}`);
      if (missing.length > 0) fail(`${label}: misses ${missing.length}: ${missing.join(', ')}`);
      if (new Set(listed).size !== listed.length) fail(`${label}: an id listed twice`);
    });

    const total = counts.recall + counts.records + counts.recordsAsOf;
    console.log(
      `leak corpus: ${total} cases — recall ${counts.recall} (${counts.recallItems} items), records ${counts.records}, ` +
        `records asOf ${counts.recordsAsOf} (${counts.listed} rows); why.overrode ${counts.overrode}, ` +
        `why.contestedWith ${counts.contestedWith}, relations ${counts.relations}; in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    expect(failures).toEqual([]);
    expect(total).toBeGreaterThanOrEqual(300);
    // the corpus is not vacuous: recall returned items, records listed rows
    expect(counts.recallItems).toBeGreaterThan(500);
    expect(counts.listed).toBeGreaterThan(500);
    expect(counts.overrode).toBeGreaterThan(0);
    expect(counts.contestedWith).toBeGreaterThan(0);
    expect(counts.relations).toBeGreaterThan(0);
  }, 600_000); // hundreds of GraphQL round trips: minutes on a loaded 2-core machine
});

// ── invariance ────────────────────────────────────────────────────────────────────────────────────────

describe('invisible records never move the ranking a caller sees', () => {
  it('adding ~40 records similar to the queries but invisible to the caller leaves recall unchanged', async () => {
    const who = [
      { c: caller('alice'), purpose: 'code-change' },
      { c: caller('bob'), purpose: 'incident' },
      { c: caller('carol-via-bot-1'), purpose: 'code-change' },
    ];
    const recipes = ['hybrid', 'bm25', 'vector'];
    const runs = who.flatMap((w) =>
      QUERIES.flatMap((query) => recipes.map((recipe) => ({ ...w, query, recipe }))),
    );
    const snapshot = () =>
      inBatches(runs, 8, async ({ c, purpose, query, recipe }) => {
        const r = await app.gql<{ recall: { items: RecallItem[] } }>(c.token, RECALL, {
          input: { query, namespace: 'acme', purpose, recipe, limit: 50, tokenBudget: 20000 },
        });
        expect(r.errors).toBeUndefined();
        return r.data!.recall.items.map((i) => ({ id: i.record.id, score: i.score }));
      });
    const before = await snapshot();
    for (const w of who)
      expect(
        before.some((b, i) => runs[i]!.c === w.c && b.length > 1),
        `${w.c.name} sees a ranking of more than one item`,
      ).toBe(true);

    // ~40 records close to the queries, each invisible to all three callers
    const hidden: Seed[] = [];
    const spots: Array<{ tenant: 'T' | 'U'; namespace: string; sensitivity: Sensitivity }> = [
      { tenant: 'T', namespace: 'acme', sensitivity: 'PUBLIC' },
      { tenant: 'T', namespace: 'acme', sensitivity: 'CONFIDENTIAL' },
      { tenant: 'T', namespace: 'acme/a', sensitivity: 'CONFIDENTIAL' },
      { tenant: 'T', namespace: 'acme/a', sensitivity: 'RESTRICTED' },
      { tenant: 'T', namespace: 'acme/a/x', sensitivity: 'RESTRICTED' },
      { tenant: 'T', namespace: 'acme/b', sensitivity: 'RESTRICTED' },
      { tenant: 'T', namespace: 'acme/c', sensitivity: 'INTERNAL' },
      { tenant: 'T', namespace: 'globex', sensitivity: 'PUBLIC' },
      { tenant: 'U', namespace: 'acme/a', sensitivity: 'PUBLIC' },
      { tenant: 'U', namespace: 'acme/a/x', sensitivity: 'PUBLIC' },
    ];
    for (let i = 0; i < 40; i++) {
      const spot = spots[i % spots.length]!;
      const q = QUERIES[i % QUERIES.length]!;
      hidden.push({
        ...spot,
        class: CLASSES[i % CLASSES.length]!,
        subject: `hidden-${nameOf(i + 500)}-${i}`,
        text: `${q[0]!.toUpperCase()}${q.slice(1)}: ${nameOf(i + 500)} checklist. ${CLAUSES[Math.floor(i / 4) % CLAUSES.length]}`,
        validFrom: iso(T0 - 200 * DAY),
      });
    }
    // each is invisible to each caller (by the oracle's entitlement) before it is written
    for (const s of hidden)
      for (const w of who) {
        const probe: TruthRecord = {
          id: '',
          namespace: s.namespace,
          sensitivity: s.sensitivity,
          status: 'ACTIVE',
          validFrom: s.validFrom!,
          validTo: null,
          statement: { subject: s.subject },
        };
        expect(
          s.tenant !== w.c.tenant || !entitled(grantsOf(w.c, w.purpose), probe),
          `${s.namespace} ${s.sensitivity} is visible to ${w.c.name}`,
        ).toBe(true);
      }
    await inBatches(hidden, 8, async (s) => {
      const r = await propose(s);
      // a new record each (not a reinforcement of a visible one), and RESTRICTED ones made ACTIVE
      expect(['ADMITTED', 'QUEUED'], `${s.subject}: ${r.outcome} ${r.reason}`).toContain(r.outcome);
      if (r.outcome === 'QUEUED') {
        const a = await mutate(admins[s.tenant], APPROVE, 'approve', {
          proposalId: r.recordId,
          expectedVersion: r.version,
        });
        expect(a.outcome).toBe('ADMITTED');
      }
    });

    const after = await snapshot();
    const diffs: string[] = [];
    runs.forEach((run, i) => {
      const b = before[i]!;
      const a = after[i]!;
      const label = `${run.c.name} ${run.purpose} ${run.recipe} "${run.query}"`;
      if (a.map((x) => x.id).join() !== b.map((x) => x.id).join())
        diffs.push(`${label}: ${JSON.stringify(b.map((x) => x.id))} → ${JSON.stringify(a.map((x) => x.id))}`);
      else
        a.forEach((x, j) => {
          // only recency moves between the two recalls (seconds on a 180-day half-life)
          if (Math.abs(x.score - b[j]!.score) > 1e-5)
            diffs.push(`${label}: score of ${x.id} ${b[j]!.score} → ${x.score}`);
        });
    });
    console.log(
      `invariance: ${runs.length} rankings compared, ${hidden.length} invisible records added, ${diffs.length} changed`,
    );
    expect(diffs).toEqual([]);
  }, 600_000);
});
