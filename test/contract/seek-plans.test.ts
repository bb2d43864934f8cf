import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CypherExecutor } from '../../src/adapters/neo4j/executor.ts';
import { Neo4jGraphStore } from '../../src/adapters/neo4j/graph-store.ts';
import { BY_SUBJECT, GROUPS_BY_SUBJECT, GROUPS_HELD_WINDOW } from '../../src/adapters/neo4j/relate-cypher.ts';
import { scopeParams } from '../../src/adapters/neo4j/scope.ts';
import { VECTOR_FETCH, VECTOR_LOAD } from '../../src/adapters/neo4j/scope-vectors.ts';
import { ENTITY_FACTS, ENTITY_NEAREST } from '../../src/adapters/neo4j/entity-facts.ts';
import { ENTITY_LOAD } from '../../src/adapters/neo4j/entity-held.ts';
import { ANCHORS } from '../../src/adapters/neo4j/recall-arms.ts';
import { namespaceChain } from '../../src/domain/model.ts';
import type { ReadScope } from '../../src/ports/graph.ts';
import { testConfig } from '../support/harness.ts';

/**
 * The statements every write runs (relate's, the loads of the vectors relate ranks, entity resolution's
 * and its index's loads; recall's anchors too) find each record and entity by an index seek on its key,
 * whatever the graph's statistics. Planned over a new, near-empty graph, Neo4j chose to scan an index and
 * filter, and kept that plan as the graph grew (README, "Plans made over an empty graph"); their MATCHes
 * now say `USING INDEX SEEK`. This asks Neo4j for the plan it would run (EXPLAIN: nothing runs) and checks
 * the seeks, and that no index or label is scanned. On a fresh
 * stack (the plan made over an empty graph), the groups' and the vector fetch's cases fail without the
 * hints (checked); with them every case holds on any graph.
 */
let db: CypherExecutor;
const scope: ReadScope = { tenant: 'plan-check', grants: [{ root: null, maxSensitivity: 'INTERNAL' }] };
const ns = 'acme/eng';
const where = { ...scopeParams(scope), ns, chain: namespaceChain(ns) };
const group = {
  ...where,
  g: 0,
  qs: [{ i: 0, subjectKey: 'billing api' }],
  held: [{ i: 0, modelId: 'm', ids: ['r-1', 'r-2'], scores: [0.9, 0.8], k: 8 }],
};

beforeAll(async () => {
  const c = testConfig().neo4j;
  db = CypherExecutor.connect(c.uri, c.user, c.password, c.database);
  await new Neo4jGraphStore(db).admin.migrate(); // the indexes the hints name
});
afterAll(() => db?.close());

type PlanNode = { operatorType: string; arguments: Record<string, unknown>; children: PlanNode[] };

/** Every operator of the plan Neo4j would run, with its details (the index it reads). */
async function operators(cypher: string, params: Record<string, unknown>): Promise<string[]> {
  const res = await db.read('test.explain', `EXPLAIN ${cypher}`, params);
  const out: string[] = [];
  const walk = (n: PlanNode) => {
    out.push(`${n.operatorType.replace(/@.*$/, '')} ${String(n.arguments['Details'] ?? '')}`);
    n.children.forEach(walk);
  };
  walk(res.summary.plan as unknown as PlanNode);
  return out;
}

const SUBJECT_SEEK = /^NodeIndexSeek .*n:Record\(tenant, subjectKey\)/;
const KEY_SEEK = /^NodeUniqueIndexSeek .*n:Record\(tenant, id\)/;
const STAMP_SEEK = /^NodeIndexSeek .*n:Record\(tenant, namespace, stamp\)/;
const ENTITY_KEY_SEEK = /^NodeUniqueIndexSeek .*e:Entity\(tenant, id\)/;
const ENTITY_STAMP_SEEK = /^NodeIndexSeek .*e:Entity\(tenant, stamp\)/;
// An entity probe with exact candidates and a window of its ranking (entity-facts.ts).
const entityProbe = {
  ...{ i: 0, id: null, ext: null, alias: 'kestrel', type: null, modelId: 'm', defaultId: 'e-3' },
  ...{ exact: ['e-1'], near: ['e-2', 'e-1'] },
};

// statement → its parameters and the seeks its plan must hold
const cases: Array<[string, string, Record<string, unknown>, RegExp[]]> = [
  ['relate, one request', BY_SUBJECT, { ...where, k: 8, qs: group.qs }, [SUBJECT_SEEK]],
  [
    "relate, several requests' groups",
    [GROUPS_BY_SUBJECT, GROUPS_HELD_WINDOW].join('\nUNION ALL\n'),
    { k: 8, groups: [group] },
    [SUBJECT_SEEK, KEY_SEEK],
  ],
  ['vector load', VECTOR_LOAD, { loads: [{ tenant: scope.tenant, ns, since: 41 }] }, [STAMP_SEEK]],
  ['vector fetch', VECTOR_FETCH, { ids: [{ tenant: scope.tenant, ns, id: 'r-1' }] }, [KEY_SEEK]],
  ['entity load', ENTITY_LOAD, { tenant: scope.tenant, since: 3 }, [ENTITY_STAMP_SEEK]],
  ['entity facts', ENTITY_FACTS, { ...scopeParams(scope), ps: [entityProbe] }, [ENTITY_KEY_SEEK]],
  [
    'entity nearest, a later window',
    ENTITY_NEAREST,
    { ...scopeParams(scope), ps: [entityProbe] },
    [ENTITY_KEY_SEEK],
  ],
  [
    'recall anchors',
    ANCHORS,
    { ...scopeParams(scope), stamp: '#entities', ids: ['e-1'], phrases: ['x'], limit: 8 },
    [ENTITY_KEY_SEEK],
  ],
];

describe('the statements of every write seek each record and entity by its key', () => {
  it.each(cases)('%s', async (_name, cypher, params, seeks) => {
    const ops = await operators(cypher, params);
    for (const seek of seeks)
      expect(
        ops.some((o) => seek.test(o)),
        `${seek} in\n${ops.join('\n')}`,
      ).toBe(true);
    expect(ops.filter((o) => /^(NodeIndexScan|NodeByLabelScan|AllNodesScan)\b/.test(o))).toEqual([]);
  });
});
