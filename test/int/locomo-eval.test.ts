import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servicePrincipal } from '../../src/domain/principal.ts';
import {
  formatLocomo,
  parseLocomoFile,
  runLocomo,
  serviceLocomoPorts,
  type LocomoReport,
} from '../../src/eval/locomo.ts';
import { freshTenant, startApp, testConfig, type TestApp } from '../support/harness.ts';

/**
 * `muninn eval --locomo FILE` on the real stack, with a tiny LoCoMo-format file written for this test
 * (test/fixtures/locomo/tiny.json: one conversation, three sessions, six answerable questions with
 * evidence): import, recall, score — the same code the command and `npm run eval:locomo` run.
 */
const FIXTURE = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'locomo', 'tiny.json'), 'utf8');
let app: TestApp;
let tenant: string;

beforeAll(async () => {
  const policy = join(testConfig().stateDir, 'locomo-eval-policy.json');
  const bulk = { perMinute: 1e6, burst: 1e5 };
  writeFileSync(policy, JSON.stringify({ budgets: { perWriterPerNamespace: bulk, perNamespace: bulk } }));
  app = await startApp({ MUNINN_POLICY_FILE: policy });
  tenant = freshTenant('locomo-eval');
});
afterAll(() => app?.stop());

const run = (): Promise<LocomoReport> =>
  runLocomo(parseLocomoFile(FIXTURE), serviceLocomoPorts(app.m.services!, servicePrincipal('eval', tenant)), {
    recipes: ['bm25', 'hybrid'],
    k: 3,
    namespaceOf: (id) => `mine/${id}`,
  });

const all = (r: LocomoReport, recipe: string) =>
  Object.values(r.rows[recipe] ?? {}).reduce(
    (t, x) => ({ any: t.any + x.any, all: t.all + x.all, n: t.n + x.n }),
    { any: 0, all: 0, n: 0 },
  );

describe('muninn eval --locomo', () => {
  it('imports the conversations into the namespace, scores every answerable question with evidence per recipe, and a re-import changes nothing', async () => {
    const first = await run();
    // 8 questions: one without evidence and one adversarial (no answer) are not scored.
    expect(first.questions).toBe(6);
    for (const recipe of ['bm25', 'hybrid']) {
      expect(all(first, recipe).n).toBe(6);
      expect(first.latencies[recipe]).toHaveLength(6);
    }
    // Each question shares a rare word with an evidence turn ("shelter", "name", "night shift",
    // "pottery", "marathon"), so both recipes put one in the top 3.
    expect(all(first, 'bm25').any).toBe(6);
    expect(all(first, 'hybrid').any).toBe(6);
    // The records cite their turns: every returned item of a recall names dia_ids from the file.
    const labels = first.perQuestion.flatMap((q) => q.items.flatMap((i) => i.labels));
    expect(labels.length).toBeGreaterThan(0);
    for (const l of labels) expect(l).toMatch(/^D[1-3]:[1-4]$/);
    expect(formatLocomo(first, 'tiny')).toMatch(/^\| hybrid \| all \| 6 \| 1\.000 \|/m);

    // A repeat import is idempotent: the same records, so the same scores.
    const again = await run();
    expect(again.rows).toEqual(first.rows);
    const count = await app.m.store.recordCount(
      { tenant, grants: [{ root: null, maxSensitivity: 'RESTRICTED' }] },
      { namespace: 'mine/tiny-1', classes: ['OBSERVATION'], statuses: ['ACTIVE', 'CANDIDATE', 'CONTESTED'] },
      {},
    );
    expect(count).toBe(10); // one observation per turn
  }, 180_000);

  it('a file that is not LoCoMo-format is BAD_USER_INPUT', () => {
    for (const text of ['{ not json', '[{"sample_id": 3}]', '{"conversation": {}}'])
      expect(() => parseLocomoFile(text)).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
  });
});
