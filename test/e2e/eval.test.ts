import { mkdtemp, readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate } from '../../src/eval/evaluate.ts';
import { parseGoldenSet, type GoldenSet } from '../../src/eval/golden.ts';
import { evalPorts } from '../../src/compose.ts';
import { servicePrincipal } from '../../src/domain/principal.ts';
import { freshTenant, startApp, type TestApp } from '../support/harness.ts';

/** `muninn eval` on the real stack: refusal on an unmarked database, seeding, scoring, persistence, skips. */
let app: TestApp;
let set: GoldenSet;
let runsDir: string;
let tenant: string;

beforeAll(async () => {
  app = await startApp();
  set = parseGoldenSet(
    JSON.parse(await readFile(join(import.meta.dirname, '..', 'fixtures', 'golden', 'basic.json'), 'utf8')),
  );
  runsDir = await mkdtemp(join(tmpdir(), 'muninn-eval-runs-'));
  tenant = freshTenant('eval');
});
afterAll(async () => {
  // The suite's database is a test database; leave it marked for whoever runs next.
  await app?.m.store.markTestDatabase(true);
  await app?.stop();
});

const ports = () => evalPorts(app.m.store, app.m.services!, servicePrincipal('eval', tenant));

describe('muninn eval', () => {
  it('refuses to seed a database that is not marked as a test database, and writes nothing', async () => {
    await app.m.store.markTestDatabase(false);
    await expect(
      evaluate([set], ports(), { recipes: ['hybrid'], seed: true, runsDir }),
    ).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    const count = await app.m.store.recordCount(
      { tenant, grants: [{ root: null, maxSensitivity: 'RESTRICTED' }] },
      { namespace: set.namespace, statuses: ['ACTIVE', 'CANDIDATE', 'CONTESTED', 'SUPERSEDED'] },
      {},
    );
    expect(count).toBe(0);
  });

  it('a set whose fixtures are missing is skipped, not scored zero', async () => {
    const [r] = await evaluate([set], ports(), { recipes: ['hybrid'], seed: false, runsDir });
    expect(r!.run.status).toBe('skipped');
    expect(r!.report).toMatch(/SKIPPED/);
  });

  it('on a marked database: seeds with fixed ids, scores every query for each recipe, persists each run with its breakdown', async () => {
    await app.m.store.markTestDatabase(true);
    const results = await evaluate([set], ports(), { recipes: ['hybrid', 'bm25'], seed: true, runsDir });
    expect(results.map((r) => r.run.status)).toEqual(['scored', 'scored']);
    for (const r of results) {
      if (r.run.status !== 'scored') throw new Error('not scored');
      expect(r.run.perQuery.map((q) => q.queryId).sort()).toEqual(set.queries.map((q) => q.id).sort());
      for (const q of r.run.perQuery)
        for (const v of Object.values(q.metrics)) {
          expect(v).toBeGreaterThanOrEqual(0);
          expect(v).toBeLessThanOrEqual(1);
        }
      // the hybrid recipe finds at least one relevant fixture for most queries of this small set
      expect(r.run.aggregate.means.hitAtK).toBeGreaterThan(0.5);
      const stored = JSON.parse(await readFile(r.path, 'utf8')) as { recipe: string; perQuery: unknown[] };
      expect(stored.recipe).toBe(r.run.recipe);
      expect(stored.perQuery).toHaveLength(set.queries.length);
    }
    // Re-running (re-seeding is a no-op: same keys) compares with the previous run of the same recipe.
    const again = await evaluate([set], ports(), { recipes: ['hybrid'], seed: true, runsDir });
    expect(again[0]!.report).toMatch(/compared with hybrid run started /);
    expect(again[0]!.report).toMatch(/^Δ all /m);
    expect((await readdir(join(runsDir, set.name))).filter((f) => f.endsWith('.json'))).toHaveLength(4); // the skipped run is kept too
  }, 120_000);
});
