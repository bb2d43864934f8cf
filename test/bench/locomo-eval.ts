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
//   --search-weights                                         recall 100 deep and run the weight search over
//                                                            hybrid's lists (src/eval/locomo-weights.ts)
//   --no-baseline                                            skip the baseline (only while iterating)
//   --scorecard                                              ingest only (no recall scoring), then run the
//                                                            steward checks once and print the scorecard and
//                                                            open findings per conversation and for `locomo`
// The scoring is src/eval/locomo.ts, shared with `muninn eval --locomo FILE`.
import { parseArgs } from 'node:util';
import { benchConfig, readLocomoDev } from './support.ts';
import { createBaselineEmbedder } from '../../src/compose.ts';
import { startMuninn } from '../../src/main.ts';
import { signDevToken } from '../../src/adapters/auth/dev-keys.ts';
import { silentLogger } from '../../src/ports/logger.ts';
import { locomoNamespace, type LocomoSet } from '../../src/ingest/locomo.ts';
import { formatLocomo, policyPart, runLocomo, type LocomoPorts } from '../../src/eval/locomo.ts';
import { formatWeightSearch, searchWeights } from '../../src/eval/locomo-weights.ts';
import type { SignalBreakdown } from '../../src/recall/fuse.ts';
import { locomoScorecard } from './locomo-scorecard.ts';

const K = 10;
const { values: opt } = parseArgs({
  allowNegative: true,
  options: {
    conversations: { type: 'string' },
    recipes: { type: 'string' },
    tenant: { type: 'string' },
    'search-weights': { type: 'boolean', default: false },
    baseline: { type: 'boolean', default: true },
    scorecard: { type: 'boolean', default: false },
  },
});
const list = (s: string | undefined) => (s ? s.split(',').map((x) => x.trim()) : undefined);
const only = list(opt.conversations ?? process.env['LOCOMO_CONVERSATIONS']);
const recipes = list(opt.recipes ?? process.env['LOCOMO_RECIPES']) ?? ['bm25', 'vector', 'hybrid'];
const reuse = opt.tenant ?? process.env['LOCOMO_TENANT'];

const full = readLocomoDev();

const config = await benchConfig('eval-locomo');
const m = await startMuninn(config, silentLogger);
const tenant = reuse ?? config.kafka.groupId;
const token = await signDevToken({
  stateDir: config.stateDir,
  issuer: config.auth.issuer,
  audience: config.auth.audience,
  tenant,
  sub: 'eval',
  scopes: ['read', 'write', 'review'],
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

const RECALL = `query R($input: RecallInput!) { recall(input: $input) {
  tokens items { record { sources { label } } why { arms { arm rank } signals } } } }`;
type RecallData = {
  recall: {
    tokens: number;
    items: Array<{
      record: { sources: Array<{ label: string | null }> };
      why: { arms: Array<{ arm: string; rank: number }>; signals: SignalBreakdown };
    }>;
  };
};
const embedder = await createBaselineEmbedder(config);
const ports: LocomoPorts = {
  async ingest(ep, namespace) {
    await gql(`mutation I($input: EpisodeInput!) { ingestEpisode(input: $input) { outcome } }`, {
      input: {
        namespace,
        source: 'import:locomo',
        occurredAt: ep.occurredAt,
        turns: ep.turns,
        purpose: 'eval',
        idempotencyKey: `${ep.sampleId}-${ep.session}`,
      },
    });
  },
  async recall(q, namespace, recipe, limit) {
    const r = await gql<RecallData>(RECALL, {
      input: { query: q.question, namespace, purpose: 'eval', recipe, limit, tokenBudget: 100000 },
    });
    return {
      tokens: r.recall.tokens,
      items: r.recall.items.map((i) => ({
        labels: i.record.sources.map((s) => s.label).filter((l): l is string => l !== null),
        arms: i.why.arms,
        policy: policyPart(i.why.signals),
        subject: i.why.signals.subject.value,
      })),
    };
  },
  embed: (texts) => embedder.embed([...texts]),
  progress: (line) => process.stderr.write(`\r${line}   `),
};
const namespaceOf = locomoNamespace;
const title = (n: number) =>
  `LoCoMo dev split${only ? ` (${only.join(', ')})` : ''}, ${n} answerable questions with evidence, k=${K}, embedder ${config.embedder.kind === 'local' ? config.embedder.modelDir : config.embedder.kind}, extractor ${config.extractor.kind}; recall through GraphQL on loopback`;
// With --search-weights every recipe is asked for 100 items (its top 10 are what it would return with
// limit 10: the same ranking, cut later), and hybrid's deep lists feed the weight search.
const search = opt['search-weights'];
if (opt.scorecard) {
  const started = Date.now();
  for (const [i, ep] of data.episodes.entries()) {
    await ports.ingest(ep, namespaceOf(ep.sampleId));
    process.stderr.write(`\ringest ${i + 1}/${data.episodes.length}   `);
  }
  process.stderr.write(`\ningested in ${Math.round((Date.now() - started) / 1000)} s\n`);
  const namespaces = [...new Set(data.episodes.map((e) => namespaceOf(e.sampleId)))];
  console.log(await locomoScorecard(m, config, tenant, gql, ['locomo', ...namespaces]));
  await embedder.close?.();
  console.log(`tenant ${tenant} (reuse with --tenant ${tenant} to skip the ingest)`);
  await m.stop();
  process.exit(0);
}
const report = await runLocomo(data, opt.baseline ? ports : { ...ports, embed: undefined }, {
  recipes,
  k: K,
  namespaceOf,
  ...(search ? { fetch: 100 } : {}),
});
process.stderr.write('\n');
console.log(formatLocomo(report, title(report.questions)));
if (search) {
  const deep = report.perQuestion.filter((r) => r.recipe === 'hybrid');
  console.log(formatWeightSearch(searchWeights(deep, K), K));
}
await embedder.close?.();
console.log(`tenant ${tenant} (reuse with --tenant ${tenant} to skip the ingest)`);
await m.stop();
process.exit(0);
