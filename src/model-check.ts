import type { EmbeddingModelCount, GraphAdmin } from './ports/graph.ts';
import type { Logger } from './ports/logger.ts';

/**
 * At start, say so when the graph holds vectors of another embedding model than the running one. Vectors
 * of different models are not comparable, so vector search, relate and entity resolution compare only the
 * running model's vectors: after a switch (the default became bge-small-en-v1.5 on 2026-12-04) records
 * embedded before it are found by the lexical, graph and scope arms only. An operator who upgrades without
 * setting MUNINN_LOCAL_MODEL must hear that from the log, not find it in worse recall.
 */
export async function checkEmbeddingModels(
  admin: Pick<GraphAdmin, 'embeddingModels'>,
  modelId: string,
  logger: Logger,
): Promise<EmbeddingModelCount[]> {
  const others = (await admin.embeddingModels()).filter((m) => m.modelId !== modelId);
  if (others.length > 0) {
    logger.warn(
      { modelId, others },
      'the graph holds vectors of another embedding model: vector search, relate and entity resolution do ' +
        'not compare them with this one (set MUNINN_LOCAL_MODEL to the model that embedded them; README, ' +
        'the "Embed" step of the write path)',
    );
  }
  return others;
}
