// node --import tsx test/bench/embed.bench.ts — prints figures, asserts nothing. MUNINN_LOCAL_MODEL picks the
// model (default all-MiniLM-L6-v2; bge-small-en-v1.5 is fetched on first use).
//  1. model load time (read + hash + onnxruntime session), cold and warm;
//  2. embed throughput for 200 sentences at batch sizes 1, 8 and 32, with 1 and 2 intra-op threads
//     (BENCH_THREADS=1,2,4 to change), as texts/s and ms per text;
//  3. the hashing fallback, for scale.
import { cpus } from 'node:os';
import { ensureModel, modelFromEnv } from '../../scripts/fetch-model.mjs';
import { createOnnxEmbedder } from '../../src/adapters/embedders/onnx-embedder.ts';
import { createHashingEmbedder } from '../../src/adapters/embedders/hashing.ts';
import { type Embedder } from '../../src/ports/embedder.ts';

const subjects = [
  'The projector',
  'Our billing service',
  'A new hire',
  'The Kafka broker',
  'Customer support',
  'The CEO',
];
const verbs = ['reported', 'fixed', 'discussed', 'postponed', 'documented', 'escalated', 'reviewed'];
const objects = [
  'the outage in the European region',
  'a memory leak in the ingestion pipeline',
  'the quarterly revenue forecast and the hiring plan',
  'an incident where duplicate invoices were sent to several enterprise customers',
  'the migration of the graph store to the new cluster',
  'a request to export all notes tagged as confidential',
];
const tails = [
  'yesterday.',
  'after the standup.',
  'before the release on Friday, citing missing tests.',
  '.',
  'again.',
];
const sentences = Array.from(
  { length: 200 },
  (_, i) =>
    `${subjects[i % subjects.length]} ${verbs[(i * 3) % verbs.length]} ${objects[(i * 5) % objects.length]} ${tails[(i * 7) % tails.length]}`,
);

const ms = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6;

async function throughput(e: Embedder, batch: number): Promise<{ perSec: number; msPerText: number }> {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < sentences.length; i += batch) await e.embed(sentences.slice(i, i + batch));
  const total = ms(t0);
  return { perSec: (sentences.length / total) * 1000, msPerText: total / sentences.length };
}

const t0 = process.hrtime.bigint();
const dir = await ensureModel({ model: modelFromEnv(), log: false });
console.log(`model files verified in ${ms(t0).toFixed(0)} ms (${dir})`);
console.log(`cpu: ${cpus()[0]?.model ?? '?'} × ${cpus().length}; node ${process.version}`);
const avgTokens = sentences.reduce((s, t) => s + t.split(/\s+/).length, 0) / sentences.length;
console.log(`${sentences.length} sentences, ~${avgTokens.toFixed(1)} words each`);

const threadCounts = (process.env['BENCH_THREADS'] ?? '1,2').split(',').map((s) => Number.parseInt(s, 10));
for (const threads of threadCounts) {
  const tl = process.hrtime.bigint();
  const e = await createOnnxEmbedder(dir, { intraOpThreads: threads });
  const loadMs = ms(tl);
  const tf = process.hrtime.bigint();
  await e.embed(['warm-up']);
  console.log(
    `\nintraOpThreads ${threads}: load ${loadMs.toFixed(0)} ms, first embed ${ms(tf).toFixed(0)} ms (${e.modelId})`,
  );
  await throughput(e, 32); // warm caches and the allocator
  for (const batch of [1, 8, 32]) {
    const r = await throughput(e, batch);
    console.log(
      `  batch ${String(batch).padStart(2)}: ${r.perSec.toFixed(0).padStart(5)} texts/s  ${r.msPerText.toFixed(2)} ms/text`,
    );
  }
  await e.close();
}

const h = createHashingEmbedder();
const r = await throughput(h, 32);
console.log(`\nhashing-v1-384 fallback: ${r.perSec.toFixed(0)} texts/s  ${r.msPerText.toFixed(3)} ms/text`);
