import { afterAll, describe, expect, it } from 'vitest';
import type { EntityState, RecordState } from '../../src/domain/fold.ts';
import { contractGraph } from '../support/contract-graph.ts';
import { recordState, unitVector } from '../support/record-state.ts';

/**
 * ProjectionWrite.unchangedRevisions against Neo4j: the revisions a batch left as loaded are not written
 * again, the others are, and a record none of whose revisions changed still gets its own properties and
 * edges written.
 */

const c = await contractGraph('projection-revisions');
const { db, tenant } = c;
afterAll(() => c.cleanup());

const entity: EntityState = {
  tenant,
  id: 'e-osprey',
  name: 'Osprey',
  type: 'project',
  aliases: [],
  externalIds: [],
  sameAs: null,
  embedding: null,
};

/** A record with two revisions: version 1 retired, version 2 current. */
function twoRevisions(confidence: number, about: string[] = []): RecordState {
  const r = recordState({
    tenant,
    id: 'r-osprey',
    namespace: 'acme/eng',
    subject: 'Osprey',
    text: 'Osprey ships weekly.',
    about,
    embedding: { modelId: 'test', vector: unitVector(1, 8) },
  });
  const v1 = r.revisions[0]!;
  const v2 = {
    ...v1,
    version: 2,
    statement: { ...v1.statement, text: 'Osprey ships daily.' },
    eventId: 'ev-2',
  };
  return {
    ...r,
    confidence,
    revisions: [{ ...v1, status: 'SUPERSEDED' as const, retiredAt: v2.recordedAt }, v2],
  };
}

const revisionTexts = async () =>
  (
    await db.read(
      'test.projection-revisions',
      `MATCH (:Record {tenant: $tenant, id: 'r-osprey'})-[:HAS_REVISION]->(v:Revision)
       RETURN v.version AS version, v.text AS text ORDER BY version`,
      { tenant },
    )
  ).records.map((r) => [Number(r.get('version')), r.get('text')]);

const tamper = () =>
  db.write(
    'test.projection-revisions',
    `MATCH (v:Revision {tenant: $tenant, recordId: 'r-osprey'}) SET v.text = 'tampered'`,
    { tenant },
  );

describe('a projection write and the revisions left as loaded', () => {
  it('writes the revisions not named unchanged, and only those', async () => {
    await c.project({ records: [twoRevisions(0.5)] });
    expect(await revisionTexts()).toEqual([
      [1, 'Osprey ships weekly.'],
      [2, 'Osprey ships daily.'],
    ]);
    // Both revisions in the graph now differ from the state; the write says version 1 is unchanged.
    await tamper();
    const r = twoRevisions(0.6);
    await c.project({ records: [r], unchangedRevisions: new Map([[r, new Set([1])]]) });
    expect(await revisionTexts()).toEqual([
      [1, 'tampered'],
      [2, 'Osprey ships daily.'],
    ]);
    // Without the map every revision is written.
    await c.project({ records: [twoRevisions(0.6)] });
    expect(await revisionTexts()).toEqual([
      [1, 'Osprey ships weekly.'],
      [2, 'Osprey ships daily.'],
    ]);
  });

  it('a record with no revision to write still gets its properties and edges', async () => {
    await c.project({ entities: [entity] });
    const r = twoRevisions(0.7, ['e-osprey']);
    await c.project({ records: [r], unchangedRevisions: new Map([[r, new Set([1, 2])]]) });
    const row = await db.read(
      'test.projection-revisions',
      `MATCH (n:Record {tenant: $tenant, id: 'r-osprey'})
       RETURN n.confidence AS confidence, COUNT { (n)-[:ABOUT]->(:Entity {id: 'e-osprey'}) } AS about,
              COUNT { (n)-[:HAS_REVISION]->() } AS revisions`,
      { tenant },
    );
    expect(Number(row.records[0]!.get('confidence'))).toBeCloseTo(0.7);
    expect(Number(row.records[0]!.get('about'))).toBe(1);
    expect(Number(row.records[0]!.get('revisions'))).toBe(2);
  });
});
