// npm run eval:locomo — the LoCoMo development split (../shared/eval/locomo/) ingested through
// `ingestEpisode`, then every answerable question recalled inside its conversation's namespace with each
// recipe (bm25, vector, hybrid). A returned record hits when it cites an evidence turn (dia_id).
// Prints recall_any@10, recall_all@10 and MRR per category and recipe, the recall latency, and — over
// the same turns — the 20-line baseline of issue #10 (BM25 and all-MiniLM-L6-v2 over one "speaker: text"
// document per turn, fused by RRF k = 60), so the comparison stays side by side.
//
// Options (arguments or environment):
//   --conversations conv-26,conv-30   LOCOMO_CONVERSATIONS   a subset of the split (faster iteration)
//   --recipes hybrid,bm25             LOCOMO_RECIPES         recipes to score (default bm25,vector,hybrid)
//   --tenant T                        LOCOMO_TENANT          reuse a tenant a previous run ingested into
//                                                            (sessions already there are idempotent repeats)
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { benchConfig } from './support.ts';
import { createEmbedder, startMuninn } from '../../src/main.ts';
import { signDevToken } from '../../src/adapters/auth/dev-keys.ts';
import { silentLogger } from '../../src/ports/logger.ts';
import { locomoNamespace, parseLocomo, type LocomoSet } from '../../src/ingest/locomo.ts';
import { rankLexical } from '../../src/recall/lexical.ts';
import { cosine } from '../../src/ports/embedder.ts';

const K = 10;
const { values: opt } = parseArgs({
  options: { conversations: { type: 'string' }, recipes: { type: 'string' }, tenant: { type: 'string' } },
});
const list = (s: string | undefined) => (s ? s.split(',').map((x) => x.trim()) : undefined);
const only = list(opt.conversations ?? process.env['LOCOMO_CONVERSATIONS']);
const recipes = list(opt.recipes ?? process.env['LOCOMO_RECIPES']) ?? ['bm25', 'vector', 'hybrid'];
const reuse = opt.tenant ?? process.env['LOCOMO_TENANT'];

// ../shared/eval/locomo/ beside the checkout (a worktree may sit one level deeper): the nearest one up.
const file = [1, 2, 3, 4]
  .map((up) => new URL(`${'../'.repeat(up + 1)}shared/eval/locomo/locomo-dev.json`, import.meta.url))
  .find((u) => existsSync(u));
if (!file) throw new Error('locomo-dev.json not found in ../shared/eval/locomo/');
const full = parseLocomo(JSON.parse(readFileSync(file, 'utf8')));

const config = await benchConfig('eval-locomo');
const m = await startMuninn(config, silentLogger);
const tenant = reuse ?? config.kafka.groupId;
const token = await signDevToken({
  stateDir: config.stateDir,
  issuer: config.auth.issuer,
  audience: config.auth.audience,
  tenant,
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

const data: LocomoSet = {
  episodes: full.episodes.filter((e) => !only || only.includes(e.sampleId)),
  questions: full.questions.filter((q) => !only || only.includes(q.sampleId)),
};
{
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
    `\ningested ${data.episodes.length} sessions in ${((performance.now() - t0) / 1000).toFixed(0)} s (tenant ${tenant})\n`,
  );
}

type Row = { any: number; all: number; rr: number; n: number };
const results: Record<string, Record<number, Row>> = {};
const latencies: Record<string, number[]> = {};
const tokens: Record<string, number[]> = {};
const questions = data.questions.filter((q) => q.evidence.length > 0);

/** Scores one ranked list of cited-turn sets against a question's evidence. */
function score(recipe: string, q: (typeof questions)[number], ranked: ReadonlyArray<ReadonlySet<string>>) {
  const evidence = new Set(q.evidence);
  const firstHit = ranked.findIndex((ls) => [...ls].some((l) => evidence.has(l)));
  const covered = new Set(ranked.flatMap((ls) => [...ls]).filter((l) => evidence.has(l)));
  const row = ((results[recipe] ??= {})[q.category] ??= { any: 0, all: 0, rr: 0, n: 0 });
  row.n++;
  if (firstHit >= 0) {
    row.any++;
    row.rr += 1 / (firstHit + 1);
  }
  if (covered.size === evidence.size) row.all++;
}

// The 20-line baseline, over the same turns: BM25 + MiniLM over "speaker: text", RRF k = 60.
const embedder = await createEmbedder(config);
for (const sampleId of [...new Set(questions.map((q) => q.sampleId))]) {
  const turns = data.episodes.filter((e) => e.sampleId === sampleId).flatMap((e) => e.turns);
  const docs = turns.map((t) => ({ id: t.label, text: `${t.speaker}: ${t.text}` }));
  const vectors = await embedder.embed(docs.map((d) => d.text));
  for (const q of questions.filter((x) => x.sampleId === sampleId)) {
    const [qv] = await embedder.embed([q.question]);
    const dense = docs
      .map((d, i) => ({ id: d.id, s: cosine(qv!, vectors[i]!) }))
      .sort((a, b) => b.s - a.s)
      .map((d) => d.id);
    const fused = new Map<string, number>();
    for (const ids of [rankLexical(q.question, docs, docs.length), dense])
      ids.forEach((id, r) => fused.set(id, (fused.get(id) ?? 0) + 1 / (60 + r + 1)));
    const top = [...fused].sort((a, b) => b[1] - a[1]).slice(0, K);
    score(
      'baseline',
      q,
      top.map(([id]) => new Set([id])),
    );
  }
  process.stderr.write(`\rbaseline: ${sampleId}   `);
}
await embedder.close?.();

const RECALL = `query R($input: RecallInput!) { recall(input: $input) { tokens items { record { sources { label } } } } }`;
type RecallData = {
  recall: { tokens: number; items: Array<{ record: { sources: Array<{ label: string | null }> } }> };
};
for (const recipe of recipes) {
  latencies[recipe] = [];
  tokens[recipe] = [];
  for (const [qi, q] of questions.entries()) {
    const t = performance.now();
    const r = await gql<RecallData>(RECALL, {
      input: {
        query: q.question,
        namespace: locomoNamespace(q.sampleId),
        purpose: 'eval',
        recipe,
        limit: K,
        tokenBudget: 100000,
      },
    });
    latencies[recipe].push(performance.now() - t);
    tokens[recipe].push(r.recall.tokens);
    const labels = r.recall.items.map(
      (i) => new Set(i.record.sources.map((s) => s.label).filter((l): l is string => l !== null)),
    );
    score(recipe, q, labels);
    if (qi % 50 === 0) process.stderr.write(`\r${recipe}: ${qi}/${questions.length}   `);
  }
}
process.stderr.write('\n');
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((p / 100) * (xs.length - 1))] ?? NaN;
console.log(
  `LoCoMo dev split${only ? ` (${only.join(', ')})` : ''}, ${questions.length} answerable questions with evidence, k=${K}, embedder ${config.embedder.kind}, extractor ${config.extractor.kind}`,
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
    `recall latency (${recipe}, GraphQL loopback, sequential): p50 ${pct(l, 50).toFixed(1)} ms, p95 ${pct(l, 95).toFixed(1)} ms; tokens returned p50 ${pct(tokens[recipe]!, 50)}`,
  );
console.log(`tenant ${tenant} (reuse with --tenant ${tenant} to skip the ingest)`);
await m.stop();
process.exit(0);
