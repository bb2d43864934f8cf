import { ProjectionWaiter } from '../../src/adapters/projection-waiter.ts';
import type { Config } from '../../src/config/index.ts';
import { stewardScheduler } from '../../src/lifecycle-deps.ts';
import type { Muninn } from '../../src/main.ts';
import { silentLogger } from '../../src/ports/logger.ts';

/*
 * `npm run eval:locomo -- --scorecard`: after the ingest, one steward run over the eval's tenant (the
 * configured thresholds, the wall clock), then each namespace's scorecard through GraphQL, as a table.
 */
const SCORECARD = `query S($ns: String!) { scorecard(namespace: $ns) { namespace records live candidates coverage
  freshness contestRate reviewLatencyMs reviewed utility withFeedback openFindings { key count } } }`;

interface Card {
  namespace: string;
  records: number;
  live: number;
  candidates: number;
  coverage: number | null;
  freshness: number | null;
  contestRate: number | null;
  reviewLatencyMs: number | null;
  reviewed: number;
  utility: number | null;
  withFeedback: number;
  openFindings: Array<{ key: string; count: number }>;
}

const pct = (x: number | null) => (x === null ? '—' : `${(x * 100).toFixed(1)} %`);

export async function locomoScorecard(
  m: Muninn,
  config: Config,
  tenant: string,
  gql: <T>(query: string, variables: Record<string, unknown>) => Promise<T>,
  namespaces: readonly string[],
): Promise<string> {
  const waiter = new ProjectionWaiter(m.store.projector, config.kafka.topic);
  const steward = stewardScheduler(
    { ...config, steward: { ...config.steward, enabled: true, tenants: [tenant] } },
    { store: m.store, ledger: m.ledger, waiter, logger: silentLogger },
  )!;
  const t0 = Date.now();
  const run = await steward.runOnce();
  waiter.close();
  const lines = [
    `steward run: ${run.raised} findings raised in ${Math.round((Date.now() - t0) / 1000)} s ` +
      `(thresholds ${JSON.stringify(config.steward.thresholds)})`,
    '',
    '| namespace | records | live | candidates | coverage | freshness | contest rate | review latency | utility | open findings |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  ];
  for (const ns of namespaces) {
    const c = (await gql<{ scorecard: Card }>(SCORECARD, { ns })).scorecard;
    const latency =
      c.reviewLatencyMs === null ? '—' : `${Math.round(c.reviewLatencyMs / 1000)} s (${c.reviewed})`;
    const utility = c.utility === null ? '— (0 rated)' : `${c.utility} (${c.withFeedback} rated)`;
    const open = c.openFindings.map((f) => `${f.key} ${f.count}`).join(', ') || 'none';
    lines.push(
      `| ${c.namespace} | ${c.records} | ${c.live} | ${c.candidates} | ${pct(c.coverage)} | ${pct(c.freshness)} | ` +
        `${pct(c.contestRate)} | ${latency} | ${utility} | ${open} |`,
    );
  }
  return lines.join('\n');
}
