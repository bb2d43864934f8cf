// Entity resolution's lookup and recall's anchors against the number of entities in the tenant: the
// time of one `entityFacts` call (four probes, as a write naming four entities: two names that exist, two
// that do not, each with a vector) and of one `entitiesNamed` call (three phrases), at each size of
// BENCH_ENTITIES (default "500,2000,10000"). Each entity has a random 384-number vector. The first call
// after the entities grew (it loads what changed into the index held in process, entity-held.ts) is
// printed apart from the steady state (median and mean of BENCH_CALLS, default 30).
//
// Entities are written through the projection port under the bench's own tenant (no ledger, no Kafka),
// and removed at the end. Run: npm run bench:entities (starts the local stack when it is not running).
import { randomUUID } from 'node:crypto';
import { CypherExecutor } from '../../src/adapters/neo4j/executor.ts';
import { Neo4jGraphStore } from '../../src/adapters/neo4j/graph-store.ts';
import type { EntityState } from '../../src/domain/fold.ts';
import type { ReadScope } from '../../src/ports/graph.ts';
import type { EntityProbe } from '../../src/ports/ingest-lookups.ts';
import { benchConfig } from './support.ts';

const SIZES = (process.env['BENCH_ENTITIES'] ?? '500,2000,10000').split(',').map(Number);
const CALLS = Number(process.env['BENCH_CALLS'] ?? 30);
const MODEL = 'bench-random-384';

const cfg = (await benchConfig('entities')).neo4j;
const db = CypherExecutor.connect(cfg.uri, cfg.user, cfg.password, cfg.database);
const graph = new Neo4jGraphStore(db);
await graph.admin.migrate();
const tenant = `bench-entities-${randomUUID().slice(0, 8)}`;
const topic = `bench-entities-${randomUUID().slice(0, 8)}`;
const scope: ReadScope = { tenant, grants: [{ root: null, maxSensitivity: 'RESTRICTED' }] };

const vector = () => {
  const v = Array.from({ length: 384 }, () => Math.random() - 0.5);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};
const entity = (i: number): EntityState => ({
  tenant,
  id: `ent-${i}`,
  name: `Entity Number ${i}`,
  type: i % 2 ? 'project' : 'person',
  aliases: [`alias-${i}`],
  externalIds: [`ext:${i}`],
  sameAs: null,
  embedding: { modelId: MODEL, vector: vector() },
});

let written = 0;
let offset = 0n;
async function grow(to: number): Promise<void> {
  for (; written < to; written += 1000) {
    const rows = Array.from({ length: Math.min(1000, to - written) }, (_, j) => entity(written + j));
    await graph.projector.projection(async (tx) => {
      await tx.lockCheckpoint(topic, 0);
      await tx.write({ records: [], entities: rows, receipts: [], episodes: [], grants: [] });
      await tx.setCheckpoint(topic, 0, ++offset);
    });
  }
  written = to;
}

const probes = (): EntityProbe[] =>
  [`entity number ${Math.floor(written / 3)}`, `alias-${Math.floor(written / 2)}`, 'nobody', 'no one'].map(
    (alias, i) => ({ alias, vector: vector(), modelId: MODEL, defaultId: `person:probe-${i}` }),
  );

async function timed(f: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
}

function steady(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
  return `median ${s[Math.floor(s.length / 2)]!.toFixed(1)} ms, mean ${mean.toFixed(1)} ms`;
}

console.log(`entity lookups by the tenant's entity count (${CALLS} calls each after the first)`);
try {
  for (const n of SIZES) {
    await grow(n);
    const first = await timed(() => graph.lookups.entityFacts(scope, probes()));
    const facts: number[] = [];
    for (let i = 0; i < CALLS; i++) facts.push(await timed(() => graph.lookups.entityFacts(scope, probes())));
    const phrases = () => [`entity number ${i0()}`, 'alias-7', 'nobody'];
    const i0 = () => Math.floor(Math.random() * written);
    const anchors: number[] = [];
    for (let i = 0; i < CALLS; i++)
      anchors.push(await timed(() => graph.arms.entitiesNamed(scope, phrases(), 8)));
    console.log(
      `  ${String(n).padStart(6)} entities: entityFacts (4 probes) first ${first.toFixed(1)} ms, ${steady(facts)};` +
        ` entitiesNamed (3 phrases) ${steady(anchors)}`,
    );
  }
} finally {
  for (const label of ['Entity', 'ScopeStamp'])
    for (;;) {
      const res = await db.write(
        'bench.cleanup',
        `MATCH (n:${label} {tenant: $t}) WITH n LIMIT 5000 DETACH DELETE n RETURN count(*) AS c`,
        { t: tenant },
      );
      if (Number(res.records[0]?.get('c') ?? 0) === 0) break;
    }
  await db.write('bench.cleanup', 'MATCH (c:Checkpoint {topic: $topic}) DELETE c', { topic });
  await db.close();
}
