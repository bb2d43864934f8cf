import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locomoNamespace, parseLocomo, type LocomoSet } from '../../src/ingest/locomo.ts';
import { startApp, testConfig, type TestApp } from '../support/harness.ts';

/**
 * The LoCoMo development split (../shared/eval/locomo/, never copied here) through `ingestEpisode`, end
 * to end over GraphQL: one episode per session, every turn a cited record with the session's date as
 * its world time. Prints the counts.
 */
const DATA = new URL('../../../shared/eval/locomo/locomo-dev.json', import.meta.url);
const INGEST = `mutation I($input: EpisodeInput!) { ingestEpisode(input: $input) { outcome recordId reason } }`;
const OBS = `query O($ns: String!, $after: String) { records(filter: { namespace: $ns, classes: [OBSERVATION] }, first: 500, after: $after) {
  nodes { validFrom timeSource sources { label } } pageInfo { endCursor hasNextPage } } }`;

let app: TestApp;
let token: string;
let set: LocomoSet;
const suffix = randomUUID().slice(0, 8);

beforeAll(async () => {
  set = parseLocomo(JSON.parse(readFileSync(DATA, 'utf8')));
  // Bulk ingest: a budget that fits an import.
  const policy = join(testConfig().stateDir, 'policy.json');
  writeFileSync(
    policy,
    JSON.stringify({
      budgets: {
        perWriterPerNamespace: { perMinute: 1e6, burst: 1e5 },
        perNamespace: { perMinute: 1e6, burst: 1e5 },
      },
    }),
  );
  app = await startApp({
    MUNINN_POLICY_FILE: policy,
    MUNINN_LEDGER_TOPIC: `muninn.test.locomo.${suffix}`,
    MUNINN_DLQ_TOPIC: `muninn.test.locomo.${suffix}.dlq`,
    MUNINN_PROJECTOR_GROUP: `locomo-${suffix}`,
    MUNINN_AWAIT_TIMEOUT_MS: '60000',
  });
  token = await app.token({
    tenant: `locomo-${suffix}`,
    sub: 'importer',
    scopes: ['read', 'write'],
    ttlSeconds: 3600,
  });
});
afterAll(() => app?.stop());

describe('LoCoMo development split ingested end to end', () => {
  it('every turn becomes a record citing its dia_id, valid from its session date', async () => {
    const t0 = performance.now();
    const outcomes = new Map<string, number>();
    for (const ep of set.episodes) {
      const r = await app.gql<{ ingestEpisode: Array<{ outcome: string }> }>(token, INGEST, {
        input: {
          namespace: locomoNamespace(ep.sampleId),
          source: 'import:locomo',
          occurredAt: ep.occurredAt,
          turns: ep.turns,
          purpose: 'benchmark',
          idempotencyKey: `${ep.sampleId}-session-${ep.session}`,
        },
      });
      expect(r.errors, `${ep.sampleId} session ${ep.session}`).toBeUndefined();
      for (const x of r.data!.ingestEpisode) outcomes.set(x.outcome, (outcomes.get(x.outcome) ?? 0) + 1);
    }
    const seconds = (performance.now() - t0) / 1000;

    const turns = set.episodes.reduce((n, e) => n + e.turns.length, 0);
    let observations = 0;
    for (const sampleId of [...new Set(set.episodes.map((e) => e.sampleId))]) {
      const expected = new Map<string, string>();
      for (const ep of set.episodes.filter((e) => e.sampleId === sampleId))
        for (const t of ep.turns) expected.set(t.label, ep.occurredAt);
      const seen = new Map<string, string>();
      let after: string | null = null;
      for (;;) {
        const page: {
          data?: {
            records: {
              nodes: Array<{ validFrom: string; timeSource: string; sources: Array<{ label: string }> }>;
              pageInfo: { endCursor: string | null; hasNextPage: boolean };
            };
          } | null;
        } = await app.gql(token, OBS, { ns: locomoNamespace(sampleId), after });
        const rec = page.data!.records;
        for (const n of rec.nodes) {
          expect(n.sources).toHaveLength(1);
          seen.set(n.sources[0]!.label, n.validFrom);
          expect(n.timeSource).toBe('STATED');
        }
        observations += rec.nodes.length;
        if (!rec.pageInfo.hasNextPage) break;
        after = rec.pageInfo.endCursor;
      }
      expect([...seen.keys()].sort(), sampleId).toEqual([...expected.keys()].sort());
      for (const [label, when] of expected) expect(seen.get(label), `${sampleId} ${label}`).toBe(when);
    }
    expect(observations).toBe(turns);
    const summary = [...outcomes].map(([k, v]) => `${k}=${v}`).join(' ');
    process.stdout.write(
      `\nLoCoMo dev: ${new Set(set.episodes.map((e) => e.sampleId)).size} conversations, ${set.episodes.length} sessions, ${turns} turns → ${observations} turn records; statement outcomes ${summary}; ${set.questions.length} answerable questions; ${seconds.toFixed(1)} s (${Math.round(turns / seconds)} turns/s)\n`,
    );
  }, 900_000);
});
