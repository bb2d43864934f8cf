import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Neo4jRecallArms } from '../../src/adapters/neo4j/recall-arms.ts';
import type { StatementRun } from '../../src/adapters/neo4j/executor.ts';
import type { RecordState } from '../../src/domain/fold.ts';
import type { Sensitivity } from '../../src/domain/model.ts';
import type { ArmQuery, ReadScope } from '../../src/ports/graph.ts';
import { contractGraph } from '../support/contract-graph.ts';
import { recordState, unitVector } from '../support/record-state.ts';

/**
 * The lexical arm's two Lucene queries against a real Neo4j (lexical-search.ts): the words alone, the
 * scope left to the WHERE, and the words with the request's scope terms as a filter. Both must return the
 * caller's best visible matches in the same order, whatever another tenant or an invisible record holds;
 * the words alone are kept only while they pay (most of their hits visible to the caller).
 */

const c = await contractGraph('lexical-search');
const { tenant } = c;
const other = `${tenant}-other`;

const rec = (
  id: string,
  text: string,
  o: { tenant?: string; namespace?: string; sensitivity?: Sensitivity; status?: 'RETRACTED' } = {},
): RecordState => {
  const base = recordState({
    tenant: o.tenant ?? tenant,
    id,
    namespace: o.namespace ?? 'acme/eng/web',
    subject: id,
    text,
    sensitivity: o.sensitivity ?? 'PUBLIC',
    embedding: { modelId: 'test', vector: unitVector(0, 8) },
  });
  const [rev] = base.revisions;
  return { ...base, revisions: [{ ...rev!, status: o.status ?? 'ACTIVE' }] };
};

// Scores differ by how often a record says "merlin" and how long it is, so the order is the score's.
const merlin = (n: number, filler: number) =>
  [...Array<string>(n).fill('merlin'), ...Array<string>(filler).fill('ledger')].join(' ');

beforeAll(async () => {
  await c.project({
    records: [
      rec('m1', merlin(4, 1)),
      rec('m2', merlin(3, 2)),
      rec('m3', merlin(2, 3)),
      rec('m4', merlin(1, 4)),
      rec('m5', merlin(1, 9)),
      rec('m-parent', merlin(1, 6), { namespace: 'acme' }),
      rec('no-match', 'ledger only'),
      // Matches among the visible ones, each hidden from the caller for its own reason.
      rec('x-secret', merlin(5, 0), { sensitivity: 'RESTRICTED' }),
      rec('x-sibling', merlin(2, 1), { namespace: 'acme/ops' }),
      rec('x-retracted', merlin(1, 1), { status: 'RETRACTED' }),
      // Another tenant, same namespace, better matches of another word: the words alone see them first.
      ...Array.from({ length: 12 }, (_, i) => rec(`o${i}`, 'kite kite kite kite', { tenant: other })),
      rec('k1', 'kite ledger'),
      rec('k2', 'kite ledger ledger'),
    ],
  });
});

afterEach(() => {
  c.db.observer = undefined;
  (Neo4jRecallArms as unknown as { SCAN_BELOW: number }).SCAN_BELOW = SCAN_BELOW;
});
afterAll(async () => {
  await c.db.write('contract.cleanup', 'MATCH (n {tenant: $t}) DETACH DELETE n', { t: other });
  await c.cleanup();
});
const SCAN_BELOW = Neo4jRecallArms.SCAN_BELOW;

const publicOnly: ReadScope = { tenant, grants: [{ root: null, maxSensitivity: 'PUBLIC' }] };
const arm = (namespace: string): ArmQuery => ({
  scope: publicOnly,
  namespace,
  classes: null,
  validAt: '2026-06-01T00:00:00.000Z',
  knownAt: null,
  k: 10,
});

/** The arm with every request on the fulltext index, trying the words alone first (0) or never (Infinity). */
function lexicalArm(unscopedFrom: number) {
  (Neo4jRecallArms as unknown as { SCAN_BELOW: number }).SCAN_BELOW = -1;
  return new Neo4jRecallArms(c.db, undefined, { lexicalUnscopedFrom: unscopedFrom });
}

/** The Lucene queries one call sent: 'words' alone or 'scoped' (scope terms required). */
async function luceneSent(work: () => Promise<unknown>): Promise<string[]> {
  const runs: StatementRun[] = [];
  c.db.observer = (r) => runs.push(r);
  await work();
  c.db.observer = undefined;
  return runs
    .filter((r) => r.op === 'recall.lexical')
    .map((r) => (String(r.params['lucene']).startsWith('+scopeTerms:') ? 'scoped' : 'words'));
}

const ids = (cs: ReadonlyArray<{ id: string }>) => cs.map((x) => x.id);

describe('the lexical arm: the words alone and the scoped query return the same records', () => {
  it('best visible matches by score, hidden records never returned, by both queries', async () => {
    const q = arm('acme/eng/web');
    const scoped = await lexicalArm(Infinity).lexicalArm(q, 'merlin', 10);
    let words: Awaited<typeof scoped> = [];
    expect(await luceneSent(async () => (words = await lexicalArm(0).lexicalArm(q, 'merlin', 10)))).toEqual([
      'words',
    ]);
    expect(ids(scoped)).toEqual(['m1', 'm2', 'm3', 'm4', 'm-parent', 'm5']);
    expect(ids(words)).toEqual(ids(scoped));
  });

  it('a fetch smaller than the matches: the same best ones, in the same order', async () => {
    for (const fetch of [1, 2, 3, 5]) {
      const scoped = await lexicalArm(Infinity).lexicalArm(arm('acme/eng/web'), 'merlin', fetch);
      const words = await lexicalArm(0).lexicalArm(arm('acme/eng/web'), 'merlin', fetch);
      expect(ids(scoped)).toEqual(['m1', 'm2', 'm3', 'm4', 'm-parent'].slice(0, fetch));
      expect(ids(words)).toEqual(ids(scoped));
    }
  });

  it('a request in the parent namespace sees its subtree by both queries', async () => {
    const scoped = await lexicalArm(Infinity).lexicalArm(arm('acme'), 'merlin', 10);
    let words: Awaited<typeof scoped> = [];
    expect(
      await luceneSent(async () => (words = await lexicalArm(0).lexicalArm(arm('acme'), 'merlin', 10))),
    ).toEqual(['words']);
    expect(new Set(ids(scoped))).toEqual(new Set(['m1', 'm2', 'm3', 'm4', 'm-parent', 'm5', 'x-sibling']));
    expect(ids(words)).toEqual(ids(scoped));
  });
});

describe('the lexical arm keeps the words alone only while most of their hits are visible', () => {
  it('hits mostly visible: one search, by the words alone, and the next one too', async () => {
    const arms = lexicalArm(0);
    const q = arm('acme/eng/web');
    expect(await luceneSent(() => arms.lexicalArm(q, 'merlin', 1))).toEqual(['words']);
    expect(await luceneSent(() => arms.lexicalArm(q, 'merlin', 1))).toEqual(['words']);
  });

  it("another tenant's hits fill the window: the scoped query answers, and is asked first next time", async () => {
    const arms = lexicalArm(0);
    const q = arm('acme/eng/web');
    // Twelve better matches of the other tenant come first: the words' window of 2 × fetch holds none
    // of the caller's, so the scoped query answers, and this scope's share sends it there directly.
    expect(await luceneSent(() => arms.lexicalArm(q, 'kite', 2))).toEqual(['words', 'scoped']);
    expect(ids(await arms.lexicalArm(q, 'kite', 2))).toEqual(['k1', 'k2']);
    expect(await luceneSent(() => arms.lexicalArm(q, 'kite', 2))).toEqual(['scoped']);
  });

  it('below the size it starts from, the scoped query only', async () => {
    const arms = lexicalArm(Infinity);
    expect(await luceneSent(() => arms.lexicalArm(arm('acme/eng/web'), 'merlin', 1))).toEqual(['scoped']);
  });
});
