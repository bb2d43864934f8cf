import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
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
import { freshTenant, PROPOSE, RETRACT, startApp, type TestApp } from './harness.ts';

/**
 * The leak corpus's generator and oracle, shared by test/e2e/leak-corpus.test.ts (recall, records,
 * counts, relations, why) and test/e2e/analytics.test.ts (the analysts' queries): tenants, namespaces,
 * labels, purposes, statuses and validity windows seeded through the API; the ground truth read back with
 * an admin token; the callers and their grants; and what each caller may see by the pure entitlement
 * model of src/domain/access.ts. One corpus per test file (vitest isolates modules per file).
 */

export const GRANT = `mutation G($input: GrantAccessInput!) { grantAccess(input: $input) { outcome grantId reason } }`;
export const REVOKE = `mutation V($input: RevokeAccessInput!) { revokeAccess(input: $input) { outcome grantId reason } }`;
export const APPROVE = `mutation A($input: ApproveInput!) { approve(input: $input) { outcome recordId version reason } }`;
export const REJECT = `mutation J($input: RejectInput!) { reject(input: $input) { outcome recordId version reason } }`;
export const GRANTS = `{ grants { id grantee namespace maxSensitivity purposes revokedAt } }`;
export const TRUTH = `query T($f: RecordFilter!) { records(filter: $f, first: 500) {
  totalCount pageInfo { hasNextPage }
  nodes { id namespace sensitivity status validFrom validTo class statement { subject predicate } about { id } } } }`;
// 100 a page (not 500): with relations the query's cost would otherwise exceed the API's limit.
export const LIST = `query L($f: RecordFilter!, $asOf: AsOf, $after: String) {
  records(filter: $f, asOf: $asOf, first: 100, after: $after) {
    totalCount pageInfo { hasNextPage endCursor }
    nodes { id relations { type target { id } } } } }`;
export const RECALL = `query R($input: RecallInput!) { recall(input: $input) {
  items { score record { id relations { type target { id } } } why { overrode contestedWith } } } }`;

export type Receipt = {
  outcome: string;
  recordId: string | null;
  version: number | null;
  reason: string | null;
};
export type TruthRecord = {
  id: string;
  namespace: string;
  sensitivity: Sensitivity;
  status: RecordStatus;
  validFrom: string;
  validTo: string | null;
  statement: { subject: string };
};
/** A ground-truth record as an admin reads it (class, predicate and entities for the analytics oracle). */
export type TruthRecordFull = TruthRecord & {
  class: string;
  statement: { subject: string; predicate: string };
  about: Array<{ id: string }>;
};
export type Relations = Array<{ type: string; target: { id: string } | null }>;
export type ListPage = {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  nodes: Array<{ id: string; relations: Relations }>;
};
export type RecallItem = {
  score: number;
  record: { id: string; relations: Relations };
  why: { overrode: Array<{ id: string; rule: string }>; contestedWith: string[] };
};

export const DAY = 86_400_000;
export const T0 = Date.now();
export const iso = (ms: number) => new Date(ms).toISOString();

export const NAMESPACES = ['acme', 'acme/a', 'acme/a/x', 'acme/b', 'acme/b/y', 'globex'] as const;
export const QUERY_NAMESPACES = ['acme', 'acme/a', 'acme/a/x', 'acme/b/y', 'globex'] as const;
export const PURPOSES = ['code-change', 'incident', 'customer-reply'] as const;
export const VARIANTS = ['current', 'future', 'expired', 'retracted'] as const;
export type Variant = (typeof VARIANTS)[number];
/** World times recall and records are asked about: now, inside the expired window, after `future` begins. */
export const VALID_AT = {
  now: undefined,
  past: iso(T0 - 90 * DAY),
  future: iso(T0 + 400 * DAY),
} as const;
export type ValidAtKey = keyof typeof VALID_AT;

export const QUERIES = [
  'deploy pipeline canary postgres backup',
  'how do we restore a postgres backup after an incident',
  'canary rollout latency alerts on the deploy pipeline',
  'rotate secrets after a postgres failover',
];

// ── seeded text: a shared vocabulary (so queries match many records), one template and one clause per
// record (so no two records are near-duplicates), and a distinct name ──────────────────────────────────
export const TEMPLATES: Array<(n: string) => string> = [
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
export const CLAUSES = [
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
export const STARS = [
  'orion',
  'vega',
  'lyra',
  'draco',
  'cygnus',
  'pavo',
  'auriga',
  'carina',
  'hydra',
  'lepus',
];
export const COLOURS = [
  'amber',
  'cobalt',
  'jade',
  'ochre',
  'scarlet',
  'teal',
  'umber',
  'violet',
  'ivory',
  'slate',
];
export const CLASSES = ['FACT', 'PROCEDURE', 'CONSTRAINT', 'FACT', 'PREFERENCE', 'DECISION'] as const;
export const nameOf = (i: number) => `${STARS[i % 10]}-${COLOURS[Math.floor(i / 10) % 10]}`;
export const textOf = (i: number) =>
  `${TEMPLATES[i % TEMPLATES.length]!(nameOf(i))} ${CLAUSES[Math.floor(i / TEMPLATES.length) % CLAUSES.length]}`;

export const state = {
  /** The running Muninn the corpus was seeded into (set by setupLeakCorpus). */
  app: undefined as unknown as TestApp,
  /** The issuer of every token (grantee keys are `iss|sub`). */
  iss: '',
};
export const tenants = { T: '', U: '' };
export const admins = { T: '', U: '' };
export const truth: Record<'T' | 'U', TruthRecordFull[]> = { T: [], U: [] };
export const seededIds = new Set<string>();
export const outcomes: Record<string, number> = {};
/** The grants the corpus made, as the oracle sees them (revocations applied in place). */
export const held: GrantState[] = [];

// ── helpers ───────────────────────────────────────────────────────────────────────────────────────────

export async function inBatches<T, R>(xs: readonly T[], size: number, fn: (x: T, i: number) => Promise<R>) {
  const out: R[] = [];
  for (let i = 0; i < xs.length; i += size)
    out.push(...(await Promise.all(xs.slice(i, i + size).map((x, j) => fn(x, i + j)))));
  return out;
}

export async function mutate(token: string, doc: string, field: string, input: Record<string, unknown>) {
  const r = await state.app.gql<Record<string, Receipt>>(token, doc, { input });
  expect(r.errors, `${field} ${JSON.stringify(input)}`).toBeUndefined();
  const receipt = r.data![field]!;
  outcomes[`${field}:${receipt.outcome}`] = (outcomes[`${field}:${receipt.outcome}`] ?? 0) + 1;
  return receipt;
}

export interface Seed {
  /** Entities the record is about (by alias and type). */
  readonly about?: ReadonlyArray<{ alias: string; type: string }>;
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

export async function propose(s: Seed): Promise<Receipt> {
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
    ...(s.about ? { about: s.about.map((a) => ({ ...a })) } : {}),
    ...(cls === 'DECISION' ? { rationale: 'Agreed by the owners.' } : {}),
    ...(s.validFrom ? { validFrom: s.validFrom } : {}),
    ...(s.validTo ? { validTo: s.validTo } : {}),
    purpose: 'seed',
    idempotencyKey: randomUUID(),
  });
  if (receipt.recordId) seededIds.add(receipt.recordId);
  return receipt;
}

export const windowOf = (v: Variant, i: number): { validFrom?: string; validTo?: string } => {
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
export const APPROVED_RESTRICTED = new Set(['acme', 'acme/a/x', 'acme/b', 'globex']);

export async function seedGrid(tenant: 'T' | 'U', variants: readonly Variant[], offset: number) {
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
export const SAME_START = iso(T0 - 10 * DAY);

/** Conflicting statements, so that CONTESTED, SUPERSEDED, `overrode` and `contestedWith` all occur. */
export async function seedConflicts() {
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

export async function readTruth(tenant: 'T' | 'U'): Promise<TruthRecordFull[]> {
  const out: TruthRecordFull[] = [];
  for (const namespace of ['acme', 'globex']) {
    const r = await state.app.gql<{
      records: { totalCount: number; pageInfo: { hasNextPage: boolean }; nodes: TruthRecordFull[] };
    }>(admins[tenant], TRUTH, { f: { namespace, statuses: [...RecordStatuses] } });
    expect(r.errors).toBeUndefined();
    expect(r.data!.records.pageInfo.hasNextPage).toBe(false);
    expect(r.data!.records.totalCount).toBe(r.data!.records.nodes.length);
    out.push(...r.data!.records.nodes);
  }
  return out;
}

// ── callers and the oracle ────────────────────────────────────────────────────────────────────────────

export interface Caller {
  readonly name: string;
  readonly tenant: 'T' | 'U';
  readonly sub: string;
  readonly actor?: string;
  token: string;
}
export const CALLERS: Caller[] = [
  { name: 'alice', tenant: 'T', sub: 'alice', token: '' },
  { name: 'bob', tenant: 'T', sub: 'bob', token: '' },
  { name: 'carol-via-bot-1', tenant: 'T', sub: 'carol', actor: 'bot-1', token: '' },
  { name: 'carol', tenant: 'T', sub: 'carol', token: '' },
  { name: 'dave', tenant: 'T', sub: 'dave', token: '' },
  { name: 'member', tenant: 'T', sub: 'member', token: '' },
  { name: 'outsider', tenant: 'U', sub: 'outsider', token: '' },
];
export const caller = (name: string) => CALLERS.find((c) => c.name === name)!;

export const principalOf = (c: Caller): Principal => ({
  iss: state.iss,
  sub: c.sub,
  tenant: tenants[c.tenant],
  scopes: new Set(['read', 'write']),
  actors: c.actor ? [{ iss: state.iss, sub: c.actor }] : [],
  tokenId: undefined,
  expiresAt: undefined,
});

/** The caller's effective read grants, by the same pure function the reference policy uses. */
export const grantsOf = (c: Caller, purpose: string | undefined): ScopeGrant[] =>
  effectiveGrants(
    principalOf(c),
    purpose,
    held.filter((g) => g.tenant === tenants[c.tenant]),
    { defaultClearance: 'CONFIDENTIAL' },
    false,
  );

export const rank = (s: Sensitivity) => Sensitivities.indexOf(s);
export const entitled = (gs: readonly ScopeGrant[], r: Pick<TruthRecord, 'namespace' | 'sensitivity'>) =>
  gs.some((g) => covers(g.root, r.namespace) && rank(r.sensitivity) <= rank(g.maxSensitivity));
export const within = (ns: string, root: string) => ns === root || ns.startsWith(`${root}/`);
export const validAt = (r: TruthRecord, at: string) =>
  Date.parse(r.validFrom) <= Date.parse(at) && (r.validTo === null || Date.parse(r.validTo) > Date.parse(at));
export const byId = (c: Caller) => new Map(truth[c.tenant].map((r) => [r.id, r]));

/** What recall may return: entitled for the purpose, believed (ACTIVE/CONTESTED), valid then, in or above the namespace. */
export function recallOracle(c: Caller, purpose: string, namespace: string, at: string): Set<string> {
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
export function recordsOracle(
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

/**
 * Every relation listed must lead to a record the caller may read under the purpose the top-level field
 * stated: a recall's items read their relations under the recall's purpose, `records` without one here.
 */
export function expectRelationsVisible(c: Caller, rels: Relations, label: string, purpose?: string) {
  const gs = grantsOf(c, purpose);
  const known = byId(c);
  for (const rel of rels) {
    expect(rel.target, `${label}: a ${rel.type} relation to an invisible record is listed`).not.toBeNull();
    const t = known.get(rel.target!.id);
    expect(t && entitled(gs, t), `${label}: relation target ${rel.target!.id} not entitled`).toBe(true);
  }
}

export const sorted = (xs: Iterable<string>) => [...xs].sort();

// ── setup ─────────────────────────────────────────────────────────────────────────────────────────────

// ── setup ─────────────────────────────────────────────────────────────────────────────────────────────

export async function grant(
  sub: string,
  namespace: string,
  maxSensitivity: Sensitivity,
  purposes: string[] | null,
) {
  const r = await state.app.gql<{ grantAccess: { outcome: string; grantId: string } }>(admins.T, GRANT, {
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
    grantee: `${state.iss}|${sub}`,
    namespace,
    maxSensitivity,
    purposes,
    grantedBy: `${state.iss}|root`,
    grantedAt: new Date().toISOString(),
    revokedAt: null,
    revokeReason: null,
  };
  held.push(g);
  return g;
}

/** Seeds the corpus into a fresh Muninn: records, conflicts, grants (one revoked), tokens, ground truth. */
export async function setupLeakCorpus(
  o: { seedMore?: () => Promise<void>; appConfig?: Record<string, string> } = {},
): Promise<{ app: TestApp; iss: string; seedMs: number }> {
  const t0 = performance.now();
  state.app = await startApp(o.appConfig);
  state.iss = state.app.config.auth.issuer;
  tenants.T = freshTenant('leak');
  tenants.U = freshTenant('leaku');
  admins.T = await state.app.token({ tenant: tenants.T, sub: 'root', scopes: ['admin'], ttlSeconds: 3600 });
  admins.U = await state.app.token({ tenant: tenants.U, sub: 'root', scopes: ['admin'], ttlSeconds: 3600 });

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
  const v = await state.app.gql<{ revokeAccess: { outcome: string } }>(admins.T, REVOKE, {
    input: { grantId: globex.id, reason: 'moved teams' },
  });
  expect(v.errors).toBeUndefined();
  expect(v.data!.revokeAccess.outcome).toBe('ADMITTED');
  const i = held.findIndex((g) => g.id === globex.id);
  held[i] = { ...held[i]!, revokedAt: new Date().toISOString() };

  await o.seedMore?.();

  for (const c of CALLERS)
    c.token = await state.app.token({
      tenant: tenants[c.tenant],
      sub: c.sub,
      ttlSeconds: 3600,
      ...(c.actor ? { act: { sub: c.actor, iss: state.iss } } : {}),
    });

  truth.T = await readTruth('T');
  truth.U = await readTruth('U');
  return { app: state.app, iss: state.iss, seedMs: performance.now() - t0 };
}
