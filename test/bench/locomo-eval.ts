// npm run eval:locomo — the LoCoMo development split (../shared/eval/locomo/) ingested through
// `ingestEpisode`, then every answerable question recalled inside its conversation's namespace with each
// recipe (bm25, vector, hybrid). A returned record hits when it cites an evidence turn (dia_id).
// Prints recall_any@10, recall_all@10 and MRR per category and recipe, and the recall latency.
import { readFileSync } from 'node:fs';
import { benchConfig } from './support.ts';
import { startMuninn } from '../../src/main.ts';
import { signDevToken } from '../../src/adapters/auth/dev-keys.ts';
import { silentLogger } from '../../src/ports/logger.ts';
import { locomoNamespace, parseLocomo } from '../../src/ingest/locomo.ts';

const K = 10;
const config = await benchConfig('eval-locomo');
const stateDir = config.stateDir;
const m = await startMuninn(config, silentLogger);
const token = await signDevToken({
  stateDir,
  issuer: config.auth.issuer,
  audience: config.auth.audience,
  tenant: config.kafka.groupId,
  sub: 'eval',
  scopes: ['read', 'write'],
  ttlSeconds: 7200,
});
const gql = async <T>(query: string, variables: Record<string, unknown>): Promise<T> => {
  const res = await fetch(m.api!.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: unknown };
  if (!body.data) throw new Error(JSON.stringify(body.errors));
  return body.data;
};

const data = parseLocomo(
  JSON.parse(readFileSync(new URL('../../../shared/eval/locomo/locomo-dev.json', import.meta.url), 'utf8')),
);
const t0 = performance.now();
for (const ep of data.episodes) {
  await gql(`mutation I($input: EpisodeInput!) { ingestEpisode(input: $input) { outcome } }`, {
    input: {
      namespace: locomoNamespace(ep.sampleId),
      source: 'import:locomo',
      occurredAt: ep.occurredAt,
      turns: ep.turns,
      purpose: 'eval',
      idempotencyKey: `${ep.sampleId}-${ep.session}`,
    },
  });
  process.stderr.write(`\ringested ${ep.sampleId} session ${ep.session}   `);
}
process.stderr.write(
  `\ningested ${data.episodes.length} sessions in ${((performance.now() - t0) / 1000).toFixed(0)} s\n`,
);

const RECALL = `query R($input: RecallInput!) { recall(input: $input) { items { record { sources { label } } } } }`;
type Row = { any: number; all: number; rr: number; n: number };
const results: Record<string, Record<number, Row>> = {};
const latencies: Record<string, number[]> = {};
const questions = data.questions.filter((q) => q.evidence.length > 0);
for (const recipe of ['bm25', 'vector', 'hybrid']) {
  results[recipe] = {};
  latencies[recipe] = [];
  for (const [qi, q] of questions.entries()) {
    const t = performance.now();
    const r = await gql<{
      recall: { items: Array<{ record: { sources: Array<{ label: string | null }> } }> };
    }>(RECALL, {
      input: {
        query: q.question,
        namespace: locomoNamespace(q.sampleId),
        purpose: 'eval',
        recipe,
        limit: K,
        tokenBudget: 100000,
      },
    });
    latencies[recipe]!.push(performance.now() - t);
    const labels = r.recall.items.map((i) => new Set(i.record.sources.map((s) => s.label)));
    const evidence = new Set(q.evidence);
    const firstHit = labels.findIndex((ls) => [...ls].some((l) => l !== null && evidence.has(l)));
    const covered = new Set(
      labels.flatMap((ls) => [...ls]).filter((l): l is string => l !== null && evidence.has(l)),
    );
    const row = (results[recipe]![q.category] ??= { any: 0, all: 0, rr: 0, n: 0 });
    row.n++;
    if (firstHit >= 0) {
      row.any++;
      row.rr += 1 / (firstHit + 1);
    }
    if (covered.size === evidence.size) row.all++;
    if (qi % 50 === 0) process.stderr.write(`\r${recipe}: ${qi}/${questions.length}   `);
  }
}
process.stderr.write('\n');
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((p / 100) * (xs.length - 1))] ?? NaN;
console.log(
  `LoCoMo dev split, ${questions.length} answerable questions with evidence, k=${K}, embedder ${config.embedder.kind}, extractor ${config.extractor.kind}`,
);
console.log('| recipe | category | n | recall_any@10 | recall_all@10 | MRR |');
console.log('|---|---|---|---|---|---|');
for (const [recipe, cats] of Object.entries(results)) {
  const tot: Row = { any: 0, all: 0, rr: 0, n: 0 };
  for (const [cat, r] of Object.entries(cats).sort()) {
    console.log(
      `| ${recipe} | ${cat} | ${r.n} | ${(r.any / r.n).toFixed(3)} | ${(r.all / r.n).toFixed(3)} | ${(r.rr / r.n).toFixed(3)} |`,
    );
    tot.any += r.any;
    tot.all += r.all;
    tot.rr += r.rr;
    tot.n += r.n;
  }
  console.log(
    `| ${recipe} | all | ${tot.n} | ${(tot.any / tot.n).toFixed(3)} | ${(tot.all / tot.n).toFixed(3)} | ${(tot.rr / tot.n).toFixed(3)} |`,
  );
}
for (const [recipe, l] of Object.entries(latencies))
  console.log(
    `recall latency (${recipe}, GraphQL loopback, sequential): p50 ${pct(l, 50).toFixed(1)} ms, p95 ${pct(l, 95).toFixed(1)} ms`,
  );
await m.stop();
process.exit(0);
