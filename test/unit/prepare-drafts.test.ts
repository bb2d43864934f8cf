import { describe, expect, it } from 'vitest';
import { defaultAdmissionPolicy } from '../../src/domain/admission.ts';
import { prepareDrafts } from '../../src/ingest/plan-drafts.ts';
import { StageTimes } from '../../src/ingest/stage-times.ts';
import type { Embedder } from '../../src/ports/embedder.ts';
import { draft } from '../support/drafts.ts';

/*
 * What a command does before it waits for its subjects' turn: the quality gate, then one embedder call for
 * the drafts that passed (their statements, then the names they are about). Started before the wait and
 * awaited in the turn, so a failure must wait for that await.
 */

function recordingEmbedder(fail = false): Embedder & { calls: string[][] } {
  const calls: string[][] = [];
  return {
    modelId: 'test-model',
    dimensions: 2,
    calls,
    embed(texts) {
      calls.push([...texts]);
      if (fail) return Promise.reject(new Error('model down'));
      return Promise.resolve(texts.map((_, i) => new Float32Array([1, i])));
    },
  };
}

describe('prepareDrafts', () => {
  it('embeds only the drafts the quality gate keeps, with their entity names, in one call', async () => {
    const embedder = recordingEmbedder();
    const drafts = [
      draft({ about: [{ type: 'service', alias: 'billing' }] }),
      draft({ index: 1, text: 'x' }),
    ];
    const prepared = await prepareDrafts(
      { embedder, admission: defaultAdmissionPolicy },
      drafts,
      new StageTimes(),
    );
    expect(embedder.calls).toEqual([['billing stores data in postgres', 'billing']]);
    expect(prepared.embedded.drafts.map((d) => d.index)).toEqual([0]);
    expect(prepared.embedded.vectors).toHaveLength(1);
    expect([...prepared.embedded.nameVectors.keys()]).toEqual(['billing']);
    expect(prepared.refused).toHaveLength(1);
    expect(prepared.refused[0]!.reason).toContain('statement 1');
  });

  it('a failing model rejects where the turn awaits it, and not before', async () => {
    const embedder = recordingEmbedder(true);
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const prepared = prepareDrafts(
        { embedder, admission: defaultAdmissionPolicy },
        [draft()],
        new StageTimes(),
      );
      // The turn is waited for meanwhile: several turns of the event loop pass before the await.
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
      await expect(prepared).rejects.toThrow('model down');
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
