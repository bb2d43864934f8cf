// Bulk seeding for recall benchmarks and tests: N synthetic records for one tenant, loaded through the
// REAL projection path. Each record is a `propose` command turned into ledger events by `decidePropose`
// (EntityCreated + RecordProposed, the embedding carried in the event as the write pipeline carries it),
// encoded to bytes and applied in batches by `applyBatch` — the code the projector and `muninn rebuild`
// run: decode → lock checkpoint → load → fold (MemoryState) → write (records, revisions, receipts, ABOUT
// edges, fulltext and vector indexes) in one Neo4j transaction per batch.
//
// What it skips on purpose: Kafka (events go straight to applyBatch, under a private checkpoint topic that
// is removed afterwards) and the ingest pipeline's relate/admit stages (records are decided ACTIVE or
// CANDIDATE here). So seeded records are not in any ledger: `muninn rebuild` would not reproduce them.
// Use your own tenant; `dropTenant` removes everything of one tenant.
//
// CLI: node --import tsx test/bench/seed-records.ts --tenant <t> --count <n> [--root bench]
//        [--narrow <namespace>:<count>]   (uses NEO4J_URI and MUNINN_EMBEDDER; hashing recommended)
// SEED_DEBUG=1 prints the time of every applyBatch call.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import {
  decidePropose,
  entityIdFor,
  ProposeCommand,
  type ResolvedEntity,
} from '../../src/domain/commands.ts';
import { type EmbeddingCache, type LedgerEvent } from '../../src/domain/events.ts';
import { encodeEvent } from '../../src/domain/event-wire.ts';
import type { RecordClass } from '../../src/domain/model.ts';
import type { Principal } from '../../src/domain/principal.ts';
import type { Embedder } from '../../src/ports/embedder.ts';
import type { LedgerMessage } from '../../src/ports/ledger.ts';
import { applyBatch } from '../../src/projector/apply.ts';
import type { Neo4jGraphStore } from '../../src/adapters/neo4j/graph-store.ts';

// ── vocabulary ────────────────────────────────────────────────────────────────────────────────────

export const VOCAB = {
  services: [
    'payments',
    'billing',
    'checkout',
    'auth',
    'search',
    'inventory',
    'shipping',
    'notifications',
    'ledger',
    'gateway',
    'catalog',
    'pricing',
    'orders',
    'refunds',
    'reporting',
    'analytics',
    'identity',
    'subscriptions',
    'invoicing',
    'fraud',
    'recommendations',
    'messaging',
    'scheduler',
    'media',
  ],
  stores: [
    'Postgres',
    'Redis',
    'Kafka',
    'S3',
    'Elasticsearch',
    'DynamoDB',
    'MySQL',
    'Cassandra',
    'BigQuery',
    'MongoDB',
    'ClickHouse',
    'Memcached',
  ],
  data: [
    'invoices',
    'sessions',
    'audit logs',
    'customer profiles',
    'card tokens',
    'refund requests',
    'order events',
    'price lists',
    'feature flags',
    'search documents',
    'shipping labels',
    'webhook deliveries',
    'usage metrics',
    'receipts',
    'api keys',
    'user preferences',
  ],
  people: ['Alice', 'Bob', 'Carol', 'Dave', 'Erin', 'Frank', 'Grace', 'Heidi', 'Ivan', 'Judy'],
  tools: [
    'Terraform',
    'Helm',
    'ArgoCD',
    'GitHub Actions',
    'Jenkins',
    'Grafana',
    'Datadog',
    'Sentry',
    'PagerDuty',
    'OpenTelemetry',
  ],
  causes: [
    'an expired TLS certificate',
    'a full disk',
    'a bad deploy',
    'a DNS misconfiguration',
    'connection pool exhaustion',
    'a memory leak',
    'a slow query',
    'a network partition',
    'a runaway cron job',
    'a broken schema migration',
  ],
  tasks: [
    'deploy a hotfix',
    'rotate credentials',
    'restore a backup',
    'scale the cluster',
    'roll back a release',
    'replay failed webhooks',
    'rebuild the search index',
    'purge the cache',
  ],
  constraints: [
    'encrypt {data} at rest',
    'never write {data} to the logs',
    'answer within {n} ms at p99',
    'keep {data} for at most {n} days',
    'not call {svc2} synchronously',
    'run at least {n} replicas in production',
  ],
  symptoms: ['slows down', 'drops requests', 'returns stale data', 'times out', 'leaks memory'],
} as const;

/** A small, fast, seedable PRNG (mulberry32): the same seed gives the same records and queries. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(rng: () => number, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
const int = (rng: () => number, lo: number, hi: number): number => lo + Math.floor(rng() * (hi - lo + 1));

function weighted<T extends string>(rng: () => number, table: ReadonlyArray<readonly [T, number]>): T {
  const total = table.reduce((s, [, w]) => s + w, 0);
  let x = rng() * total;
  for (const [v, w] of table) if ((x -= w) < 0) return v;
  return table[table.length - 1]![0];
}

const LEAF_CLASSES: ReadonlyArray<readonly [RecordClass, number]> = [
  ['FACT', 35],
  ['OBSERVATION', 20],
  ['EVENT', 10],
  ['PROCEDURE', 10],
  ['DECISION', 10],
  ['CONSTRAINT', 8],
  ['PREFERENCE', 7],
];
/** Ancestor namespaces hold standing context (what the scope arm inherits). */
const ANCESTOR_CLASSES: ReadonlyArray<readonly [RecordClass, number]> = [
  ['CONSTRAINT', 35],
  ['PROCEDURE', 25],
  ['DECISION', 20],
  ['PREFERENCE', 10],
  ['FACT', 10],
];

export interface SyntheticRecord {
  readonly namespace: string;
  readonly class: RecordClass;
  readonly statement: { subject: string; predicate: string; object: string; text: string };
  readonly rationale: string | undefined;
  /** The service entity the record is about, when it is about one. */
  readonly service: string;
  readonly about: boolean;
}

/**
 * One realistic short statement of `cls`. `tag` makes the subject (and text) unique, e.g. for a small
 * namespace whose records must neither be near-duplicates nor conflict by subject and predicate.
 */
export function syntheticRecord(
  rng: () => number,
  namespace: string,
  cls: RecordClass,
  tag?: string,
): SyntheticRecord {
  const V = VOCAB;
  const svc = pick(rng, V.services);
  const name = tag ? `${svc} ${tag}` : svc;
  const svc2 = pick(
    rng,
    V.services.filter((s) => s !== svc),
  );
  const data = pick(rng, V.data);
  const store = pick(rng, V.stores);
  const n = int(rng, 2, 400);
  const s = (subject: string, predicate: string, object: string, text: string) => ({
    subject,
    predicate,
    object,
    text,
  });
  let statement: SyntheticRecord['statement'];
  let rationale: string | undefined;
  switch (cls) {
    case 'FACT': {
      const v = int(rng, 0, 2);
      statement =
        v === 0
          ? s(
              `${name} service`,
              `stores ${data} in`,
              `${store} shard ${n}`,
              `The ${name} service stores ${data} in ${store} shard ${n}.`,
            )
          : v === 1
            ? s(
                `${name} service`,
                `depends on ${svc2} for`,
                data,
                `The ${name} service depends on ${svc2} for ${data}, with a timeout of ${n} ms.`,
              )
            : s(
                `${name} service`,
                `publishes ${data} to`,
                store,
                `The ${name} service publishes ${data} to ${store} topic ${svc}-v${n}.`,
              );
      break;
    }
    case 'PREFERENCE': {
      const person = pick(rng, V.people);
      const tool = pick(rng, V.tools);
      const task = pick(rng, V.tasks);
      statement = s(
        person,
        `prefers for ${task}`,
        tool,
        `${person} prefers ${tool} over ${pick(rng, V.tools)} to ${task} on ${name}.`,
      );
      break;
    }
    case 'DECISION': {
      const to = pick(rng, V.stores);
      statement = s(
        `${name} ${data}`,
        'moved to',
        to,
        `We decided to move the ${data} of ${name} from ${store} to ${to}.`,
      );
      rationale = `${pick(rng, V.causes)} in ${store} caused ${n} incidents last quarter.`;
      break;
    }
    case 'CONSTRAINT': {
      const rule = pick(rng, V.constraints)
        .replace('{data}', data)
        .replace('{n}', String(n))
        .replace('{svc2}', svc2);
      statement = s(`${name} service`, 'must', rule, `The ${name} service must ${rule}.`);
      break;
    }
    case 'PROCEDURE': {
      const task = pick(rng, V.tasks);
      const tool = pick(rng, V.tools);
      statement = s(
        `${task} for ${name}`,
        'is done with',
        tool,
        `To ${task} for ${name}, run ${tool} with ${n} workers, then check the ${pick(rng, V.tools)} dashboards.`,
      );
      break;
    }
    case 'EVENT': {
      const cause = pick(rng, V.causes);
      statement = s(
        `${name} service`,
        'had an outage caused by',
        cause,
        `On day ${n} the ${name} service had an outage caused by ${cause}.`,
      );
      break;
    }
    default: {
      const person = pick(rng, V.people);
      const symptom = pick(rng, V.symptoms);
      statement = s(
        `${name} service`,
        symptom,
        data,
        `${person} noticed that ${name} ${symptom} when ${data} exceed ${n} MB.`,
      );
    }
  }
  return { namespace, class: cls, statement, rationale, service: svc, about: rng() < 0.7 };
}

/** A question in the same vocabulary as the records (so BM25 and the vectors have something to find). */
export function benchQuery(rng: () => number): string {
  const V = VOCAB;
  const svc = pick(rng, V.services);
  const data = pick(rng, V.data);
  switch (int(rng, 0, 5)) {
    case 0:
      return `Where does the ${svc} service store ${data}?`;
    case 1:
      return `How do I ${pick(rng, V.tasks)} for ${svc}?`;
    case 2:
      return `Why did we move ${data} away from ${pick(rng, V.stores)}?`;
    case 3:
      return `What caused the ${svc} outage?`;
    case 4:
      return `Which rules apply to ${data} in the ${svc} service?`;
    default:
      return `${svc} ${pick(rng, V.symptoms)} with ${data}`;
  }
}

/** The namespace layout: `<root>/t<i>/team<j>/svc<k>` leaves, with their ancestors. */
export interface Layout {
  readonly root: string;
  readonly tribes: number;
  readonly teams: number;
  readonly services: number;
}
export const DEFAULT_LAYOUT: Layout = { root: 'bench', tribes: 10, teams: 10, services: 10 };

export const leafNamespace = (l: Layout, i: number, j: number, k: number): string =>
  `${l.root}/t${i}/team${j}/svc${k}`;

/** A random leaf namespace of the layout (what a service's agent would recall in). */
export const randomLeaf = (rng: () => number, l: Layout = DEFAULT_LAYOUT): string =>
  leafNamespace(l, int(rng, 0, l.tribes - 1), int(rng, 0, l.teams - 1), int(rng, 0, l.services - 1));

// ── seeding ───────────────────────────────────────────────────────────────────────────────────────

export interface SeedOptions {
  readonly tenant: string;
  /**
   * Records spread over the layout: 90 % in leaves, 7 % at team level, 3 % at tribe level; classes
   * weighted, ~3 % CANDIDATE and ~5 % expired (both invisible to recall), 70 % ABOUT a service entity.
   * The first seeding of a tenant adds one record per service entity in `<root>/directory` (outside every
   * leaf's ancestor chain) to create the entities.
   */
  readonly count: number;
  readonly layout?: Layout;
  /** Extra records in one small namespace: all ACTIVE, valid now, with distinct subjects. */
  readonly narrow?: { readonly namespace: string; readonly count: number };
  readonly embedder: Embedder;
  /** Events per applyBatch call (the projector's default batchMax is 2000). */
  readonly batchSize?: number;
  /** Batches applied at once, each lane under its own checkpoint partition. */
  readonly concurrency?: number;
  readonly seed?: number;
  /** Where progress and the load time go (default stdout). */
  readonly log?: (line: string) => void;
}

export interface SeedReport {
  readonly tenant: string;
  readonly records: number;
  readonly events: number;
  readonly seconds: number;
  readonly recordsPerSecond: number;
  /** Time spent embedding (inside `seconds`). */
  readonly embedSeconds: number;
  readonly narrowIds: readonly string[];
}

const stdout = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

/** How the embedder was chosen, and the advice to seed with the hashing one. */
export function embedderNote(e: Embedder): string {
  return e.modelId.startsWith('hashing')
    ? `embedder ${e.modelId} (MUNINN_EMBEDDER=hashing: recommended for seeding speed; vectors are feature hashes, fine for latency, not for quality)`
    : `embedder ${e.modelId} — seeding embeds every record; set MUNINN_EMBEDDER=hashing to seed much faster (recall then embeds queries with the same hashing model)`;
}

type Plan = { rec: SyntheticRecord; status: 'ACTIVE' | 'CANDIDATE'; validFrom: string; validTo?: string };

function plan(opts: SeedOptions, rng: () => number, now: number): { bulk: Plan[][]; narrow: Plan[] } {
  const l = opts.layout ?? DEFAULT_LAYOUT;
  const lanes = Math.max(1, opts.concurrency ?? 2);
  const bulk: Plan[][] = Array.from({ length: lanes }, () => []);
  const day = 86_400_000;
  for (let n = 0; n < opts.count; n++) {
    const i = int(rng, 0, l.tribes - 1);
    const j = int(rng, 0, l.teams - 1);
    const k = int(rng, 0, l.services - 1);
    const where = rng();
    const [ns, classes] =
      where < 0.9
        ? [leafNamespace(l, i, j, k), LEAF_CLASSES]
        : where < 0.97
          ? [`${l.root}/t${i}/team${j}`, ANCESTOR_CLASSES]
          : [`${l.root}/t${i}`, ANCESTOR_CLASSES];
    const rec = syntheticRecord(rng, ns, weighted(rng, classes));
    const from = now - int(rng, 1, 730) * day - int(rng, 0, day - 1);
    const expired = rng() < 0.05;
    const p: Plan = {
      rec,
      status: rng() < 0.03 ? 'CANDIDATE' : 'ACTIVE',
      validFrom: new Date(from).toISOString(),
      ...(expired ? { validTo: new Date(from + Math.max(1, (now - from) / 2)).toISOString() } : {}),
    };
    // One tribe's namespaces stay on one lane, so parallel batches rarely touch the same nodes.
    bulk[i % lanes]!.push(p);
  }
  const narrow: Plan[] = [];
  const nc: RecordClass[] = ['FACT', 'PROCEDURE', 'CONSTRAINT', 'DECISION', 'OBSERVATION', 'EVENT'];
  for (let n = 0; n < (opts.narrow?.count ?? 0); n++) {
    narrow.push({
      rec: syntheticRecord(rng, opts.narrow!.namespace, nc[n % nc.length]!, `unit ${n + 1}`),
      status: 'ACTIVE',
      validFrom: new Date(now - int(rng, 1, 365) * day).toISOString(),
    });
  }
  return { bulk, narrow };
}

/**
 * Loads `count` (+ narrow) records for `tenant` through applyBatch and prints the load time. Safe to call
 * again for the same tenant (it grows): idempotency keys are unique per call and existing service entities
 * are reused.
 */
export async function seedRecords(store: Neo4jGraphStore, opts: SeedOptions): Promise<SeedReport> {
  const log = opts.log ?? stdout;
  const batchSize = opts.batchSize ?? 2000;
  const run = randomUUID().slice(0, 8);
  const topic = `muninn.seed.${opts.tenant}.${run}`;
  const principal: Principal = {
    iss: 'muninn-seed',
    sub: 'seed',
    tenant: opts.tenant,
    scopes: new Set(['read', 'write']),
    actors: [],
    tokenId: undefined,
    expiresAt: undefined,
  };
  const now = Date.now();
  const rng = prng(opts.seed ?? 0x5eed);
  const { bulk, narrow } = plan(opts, rng, now);
  const total = bulk.reduce((s, l) => s + l.length, 0) + narrow.length;
  log(
    `seeding ${total} records into tenant ${opts.tenant} (${opts.count} spread over ${opts.layout?.root ?? DEFAULT_LAYOUT.root}/t*/team*/svc*` +
      `${opts.narrow ? `, ${opts.narrow.count} in ${opts.narrow.namespace}` : ''}); ${embedderNote(opts.embedder)}`,
  );

  const t0 = performance.now();
  let embedMs = 0;
  const embed = async (texts: readonly string[]): Promise<EmbeddingCache[]> => {
    const t = performance.now();
    const out: EmbeddingCache[] = [];
    for (let i = 0; i < texts.length; i += 256) {
      for (const v of await opts.embedder.embed(texts.slice(i, i + 256)))
        out.push({ modelId: opts.embedder.modelId, vector: Array.from(v) });
    }
    embedMs += performance.now() - t;
    return out;
  };

  const ctx = { principal, now: new Date(now), newId: randomUUID };
  let seq = 0;
  const toEvents = async (
    plans: readonly Plan[],
    entities: ReadonlySet<string>,
  ): Promise<LedgerEvent[][]> => {
    const vectors = await embed(plans.map((p) => p.rec.statement.text));
    return plans.map((p, idx) => {
      const cmd = ProposeCommand.parse({
        namespace: p.rec.namespace,
        class: p.rec.class,
        statement: p.rec.statement,
        ...(p.rec.about ? { about: [{ alias: p.rec.service, type: 'service' }] } : {}),
        ...(p.rec.rationale ? { rationale: p.rec.rationale } : {}),
        validFrom: p.validFrom,
        ...(p.validTo ? { validTo: p.validTo } : {}),
        purpose: 'seed',
        idempotencyKey: `seed-${run}-${seq++}`,
      });
      const resolved: ResolvedEntity[] = cmd.about.map((ref) => ({
        ref,
        existingId: entities.has(ref.alias!) ? entityIdFor(opts.tenant, 'service', ref.alias!) : undefined,
      }));
      return decidePropose(ctx, cmd, resolved, {
        status: p.status,
        confidence: 0.6,
        timeSource: 'STATED',
        embedding: vectors[idx]!,
      });
    });
  };

  const offsets = new Map<number, number>();
  const narrowIds: string[] = [];
  let events = 0;
  let done = 0;
  let nextReport = 0.1;
  const apply = async (partition: number, batch: readonly LedgerEvent[]): Promise<void> => {
    const first = offsets.get(partition) ?? 0;
    const messages: LedgerMessage[] = batch.map((e, i) => ({
      partition,
      offset: String(first + i),
      key: e.tenant,
      value: Buffer.from(encodeEvent(e)),
    }));
    offsets.set(partition, first + batch.length);
    const tA = performance.now();
    const r = await applyBatch(
      {
        store,
        topic,
        deadLetter: (d) => Promise.reject(new Error(`seeding dead-lettered an event: ${d.reason}`)),
      },
      partition,
      messages,
    );
    if (process.env['SEED_DEBUG'])
      log(`    apply p${partition} ${batch.length} events ${(performance.now() - tA).toFixed(0)} ms`);
    if (r.applied !== batch.length) throw new Error(`applied ${r.applied} of ${batch.length} events`);
    events += batch.length;
  };

  try {
    // 1. Service entities first (one intro record each), so that parallel batches only reference them.
    const have = new Set<string>();
    const everything = {
      tenant: opts.tenant,
      grants: [{ root: null, maxSensitivity: 'RESTRICTED' as const }],
    };
    for (const name of VOCAB.services)
      if (await store.findEntity(everything, { alias: name, type: 'service' })) have.add(name);
    const missing = VOCAB.services.filter((s) => !have.has(s));
    if (missing.length > 0) {
      const intros: Plan[] = missing.map((svc) => ({
        rec: {
          // Outside every leaf's ancestor chain, so no recall in the layout inherits these.
          namespace: `${opts.layout?.root ?? DEFAULT_LAYOUT.root}/directory`,
          class: 'FACT',
          statement: {
            subject: `${svc} service`,
            predicate: 'is a service of',
            object: opts.tenant,
            text: `The ${svc} service is part of the platform.`,
          },
          rationale: undefined,
          service: svc,
          about: true,
        },
        status: 'ACTIVE',
        validFrom: new Date(now - 800 * 86_400_000).toISOString(),
      }));
      await apply(0, (await toEvents(intros, have)).flat());
    }
    const entities = new Set(VOCAB.services);

    // 2. The small namespace, then the bulk in parallel lanes.
    if (narrow.length > 0) {
      const evs = await toEvents(narrow, entities);
      for (const e of evs.flat()) if (e.type === 'RecordProposed') narrowIds.push(e.payload.recordId);
      await apply(0, evs.flat());
      done += narrow.length;
    }
    await Promise.all(
      bulk.map(async (lane, partition) => {
        for (let i = 0; i < lane.length; i += batchSize) {
          const plans = lane.slice(i, i + batchSize);
          await apply(partition, (await toEvents(plans, entities)).flat());
          done += plans.length;
          if (done / total >= nextReport) {
            log(`  … ${done}/${total} records (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
            while (done / total >= nextReport) nextReport += 0.1;
          }
        }
      }),
    );
  } finally {
    // The checkpoint topic was private to this run.
    await store.db.write('seed.checkpoints', 'MATCH (c:Checkpoint {topic: $topic}) DELETE c', { topic });
  }

  const seconds = (performance.now() - t0) / 1000;
  const report: SeedReport = {
    tenant: opts.tenant,
    records: total,
    events,
    seconds,
    recordsPerSecond: total / seconds,
    embedSeconds: embedMs / 1000,
    narrowIds,
  };
  log(
    `seeded ${total} records (${events} events) into ${opts.tenant} in ${seconds.toFixed(1)} s = ` +
      `${Math.round(report.recordsPerSecond)} records/s (embedding ${report.embedSeconds.toFixed(1)} s of it)`,
  );
  return report;
}

/** Deletes every node of `tenant` (records, revisions, receipts, entities, episodes, chunks) in batches. */
export async function dropTenant(store: Neo4jGraphStore, tenant: string): Promise<number> {
  let deleted = 0;
  for (const label of ['Revision', 'Record', 'Receipt', 'Entity', 'Chunk', 'Episode']) {
    for (;;) {
      const res = await store.db.write(
        'seed.drop',
        `MATCH (n:${label} {tenant: $tenant}) WITH n LIMIT 10000 DETACH DELETE n RETURN count(*) AS c`,
        { tenant },
      );
      const c = Number(res.records[0]?.get('c') ?? 0);
      deleted += c;
      if (c === 0) break;
    }
  }
  return deleted;
}

// ── CLI ───────────────────────────────────────────────────────────────────────────────────────────

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      tenant: { type: 'string' },
      count: { type: 'string', default: '10000' },
      root: { type: 'string', default: DEFAULT_LAYOUT.root },
      narrow: { type: 'string' },
    },
  });
  if (!values.tenant) {
    process.stderr.write(
      'usage: seed-records.ts --tenant <t> --count <n> [--root bench] [--narrow ns:count]\n',
    );
    process.exit(2);
  }
  const { load } = await import('../../src/config/index.ts');
  const { connectAdapters, createEmbedder } = await import('../../src/compose.ts');
  const { silentLogger } = await import('../../src/ports/logger.ts');
  const config = load();
  const { store, ledger } = connectAdapters(config, silentLogger);
  const embedder = await createEmbedder(config);
  await store.migrate();
  const [nns, ncount] = (values.narrow ?? '').split(':');
  await seedRecords(store, {
    tenant: values.tenant,
    count: Number(values.count),
    layout: { ...DEFAULT_LAYOUT, root: values.root },
    embedder,
    ...(nns ? { narrow: { namespace: nns, count: Number(ncount ?? 20) } } : {}),
  });
  await Promise.all([store.close(), ledger.close(), embedder.close?.()]);
}
