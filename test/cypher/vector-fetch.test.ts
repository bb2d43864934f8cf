import { describe, expect, it } from 'vitest';
import type { Params } from '../../src/adapters/neo4j/executor.ts';
import { Neo4jRecallArms } from '../../src/adapters/neo4j/recall-arms.ts';
import type { ArmQuery } from '../../src/ports/graph.ts';
import { recordingExecutor } from './recording-executor.ts';

/**
 * How the vector arm sizes its ANN fetch over a large request scope. The executor stands in for an index
 * of which a fixed share of the neighbours is visible to the scope (the test decides the share, the
 * arm only sees how many came back): the arm must fill k, and a scope it has seen before must start with
 * the fetch its visible share says fills k, so a selective scope asks the index once instead of twice.
 */
function annIndex(share: (q: Params) => number) {
  const db = recordingExecutor();
  const read = db.read;
  db.read = ((op: string, cypher: string, params: Params = {}) => {
    void read(op, cypher, params);
    const row = (r: Record<string, unknown>) => ({
      records: [{ get: (k: string) => r[k], toObject: () => r }],
    });
    if (op === 'recall.size') return Promise.resolve(row({ c: 50_000 }));
    if (op === 'recall.vector') {
      // Visible neighbours evenly spread at the share: the k-th lies at k / share, and the filter stops
      // there (seen); with fewer than k in the fetch it filtered all of it.
      const fetch = Number(params['fetch']);
      const k = Number(params['k']);
      const visible = Math.floor(fetch * share(params));
      const ids = Array.from({ length: Math.min(visible, k) }, (_, i) => `r${i}`);
      const seen = visible >= k ? Math.ceil(k / share(params)) : fetch;
      return Promise.resolve(row({ ids, seen }));
    }
    return Promise.resolve({ records: [] });
  }) as typeof db.read;
  return { db, arms: new Neo4jRecallArms(db) };
}

const arm = (root: string | null = null): ArmQuery => ({
  scope: { tenant: 't1', grants: [{ root, maxSensitivity: 'INTERNAL' }] },
  namespace: 'acme/eng/web',
  classes: null,
  validAt: '2026-01-01T00:00:00.000Z',
  knownAt: null,
  k: 10,
});
const fetches = (db: { sent: Array<{ op: string; params: Params }> }) =>
  db.sent.filter((s) => s.op.startsWith('recall.vector')).map((s) => [s.op, s.params['fetch'] ?? null]);

describe('the vector arm sizes its ANN fetch by the scope visible share', () => {
  it('a first recall at 1 % visible asks 200, then what that share says fills k twice over', async () => {
    const { db, arms } = annIndex(() => 0.01);
    expect(await arms.vectorArm(arm(), [0.1], 'm1')).toHaveLength(10);
    expect(fetches(db)).toEqual([
      ['recall.vector', 200],
      ['recall.vector', 2000],
    ]);
  });

  it('the same scope next time asks once, with the fetch its share says', async () => {
    const { db, arms } = annIndex(() => 0.01);
    await arms.vectorArm(arm(), [0.1], 'm1');
    db.sent.length = 0;
    expect(await arms.vectorArm(arm(), [0.2], 'm1')).toHaveLength(10);
    expect(fetches(db)).toEqual([['recall.vector', 2000]]);
  });

  it('another caller scope does not inherit the share: it starts at 200 again', async () => {
    const { db, arms } = annIndex(() => 0.01);
    await arms.vectorArm(arm(), [0.1], 'm1');
    db.sent.length = 0;
    await arms.vectorArm(arm('acme'), [0.1], 'm1');
    expect(fetches(db)[0]).toEqual(['recall.vector', 200]);
  });

  it('a scope whose fetch saw no visible neighbour goes straight to the exact scan next time', async () => {
    const { db, arms } = annIndex(() => 0.0005);
    await arms.vectorArm(arm(), [0.1], 'm1');
    db.sent.length = 0;
    await arms.vectorArm(arm(), [0.1], 'm1');
    expect(fetches(db)).toEqual([['recall.vectorExact', null]]);
  });

  it('a stale share that no longer fills k is followed by a second, larger fetch, then by the exact scan', async () => {
    let share = 0.05;
    const { db, arms } = annIndex(() => share);
    await arms.vectorArm(arm(), [0.1], 'm1'); // 200 → 10 visible: filled, share 0.05
    share = 0.001;
    db.sent.length = 0;
    await arms.vectorArm(arm(), [0.1], 'm1');
    expect(fetches(db)).toEqual([
      ['recall.vector', 400],
      ['recall.vectorExact', null],
    ]);
  });
});
