import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshTenant, PROPOSE, proposal, startApp, type TestApp } from '../support/harness.ts';

/**
 * Prometheus /metrics on its own port (MUNINN_METRICS_PORT), from a running Muninn on the real stack:
 * operations counted under their root field with their outcome code, recall stages, embedder batches,
 * projection lag per partition and the review queue — and no tenant, caller or text in any label.
 */
let app: TestApp;
let token: string;
const tenant = freshTenant('metrics');

beforeAll(async () => {
  app = await startApp({ MUNINN_METRICS_PORT: '0' });
  token = await app.token({ tenant, scopes: ['read', 'write'] });
});
afterAll(() => app?.stop());

const RECALL = `query R($input: RecallInput!) { recall(input: $input) { recallId } }`;

async function scrape(): Promise<string> {
  const res = await fetch(app.m.metrics!.url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  return res.text();
}

/** The value of one sample line, `name{labels} value`; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z0-9_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('metrics', () => {
  it('counts operations by root field and outcome code, and times them', async () => {
    const before = sample(await scrape(), 'muninn_graphql_requests_total', {
      operation: 'mutation.propose',
      code: 'OK',
    });
    const ok = await app.gql(token, PROPOSE, { input: proposal({ await: true }) });
    expect(ok.errors).toBeUndefined();
    const bad = await app.gql(token, RECALL, {
      input: { query: 'x', namespace: 'acme', purpose: 'test', limit: 1000 },
    });
    expect(bad.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
    const text = await scrape();
    expect(sample(text, 'muninn_graphql_requests_total', { operation: 'mutation.propose', code: 'OK' })).toBe(
      (before ?? 0) + 1,
    );
    expect(
      sample(text, 'muninn_graphql_requests_total', { operation: 'query.recall', code: 'BAD_USER_INPUT' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, 'muninn_graphql_request_duration_seconds_count', { operation: 'mutation.propose' }),
    ).toBeGreaterThanOrEqual(1);
    // The proposal's subject took its turn across API processes (MUNINN_SUBJECT_TURNS=graph, the default).
    expect(
      sample(text, 'muninn_subject_turn_wait_seconds_count', { outcome: 'taken' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it("a write's stages, once per write that reached the ledger: a repeat or a refusal adds none", async () => {
    const stages = ['check', 'turn', 'embed', 'lookup', 'decide', 'append', 'await'];
    const count = (text: string, stage: string) =>
      sample(text, 'muninn_write_stage_duration_seconds_count', { command: 'propose', stage }) ?? 0;
    const before = await scrape();
    const input = proposal({ await: true });
    const first = await app.gql(token, PROPOSE, { input });
    expect(first.errors).toBeUndefined();
    const after = await scrape();
    for (const stage of stages) expect(count(after, stage) - count(before, stage), stage).toBe(1);
    const repeat = await app.gql(token, PROPOSE, { input });
    expect(repeat.errors).toBeUndefined();
    // The quality gate refuses a one-character statement after its check and turn: nothing reached the ledger.
    const short = proposal();
    const gated = await app.gql<{ propose: { outcome: string } }>(token, PROPOSE, {
      input: { ...short, statement: { ...(short['statement'] as object), text: 'x' } },
    });
    expect(gated.data?.propose.outcome).toBe('REJECTED');
    const again = await scrape();
    for (const stage of stages) expect(count(again, stage), stage).toBe(count(after, stage));
  });

  it('recall stages per recipe and embedder batch sizes', async () => {
    const r = await app.gql(token, RECALL, {
      input: { query: 'which service uses postgres', namespace: 'acme', purpose: 'test', recipe: 'hybrid' },
    });
    expect(r.errors).toBeUndefined();
    const text = await scrape();
    for (const stage of ['embed', 'vector', 'fuse', 'pack'])
      expect(
        sample(text, 'muninn_recall_stage_duration_seconds_count', { recipe: 'hybrid', stage }),
        stage,
      ).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'muninn_embedding_batch_size_count')).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'muninn_embedding_batch_size_bucket', { le: '1' })).toBeGreaterThanOrEqual(1);
  });

  it('projection lag per partition and the review queue depth are read at scrape time', async () => {
    // A NORMATIVE proposal waits for a reviewer (the default policy's review:class).
    const n = Date.now().toString(36);
    const norm = await app.gql(token, PROPOSE, {
      input: proposal({
        class: 'NORMATIVE',
        await: true,
        statement: {
          subject: `svc-${n}`,
          predicate: 'must use',
          object: 'mTLS',
          text: `Service ${n} must use mTLS.`,
        },
      }),
    });
    expect((norm.data as { propose: { outcome: string } }).propose.outcome).toBe('QUEUED');
    const text = await scrape();
    expect(sample(text, 'muninn_projection_lag', { partition: '0' })).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'muninn_review_queue_depth')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'muninn_projector_dead_lettered_total')).toBeGreaterThanOrEqual(0);
  });

  it("the runtime's own memory, GC and event-loop figures, so a leak can be told from heap growth", async () => {
    const text = await scrape();
    const rss = sample(text, 'process_resident_memory_bytes');
    const heapUsed = sample(text, 'nodejs_heap_size_used_bytes');
    const heapTotal = sample(text, 'nodejs_heap_size_total_bytes');
    expect(rss).toBeGreaterThan(0);
    expect(heapUsed).toBeGreaterThan(0);
    expect(heapUsed!).toBeLessThanOrEqual(heapTotal!);
    expect(heapTotal!).toBeLessThan(rss!);
    expect(sample(text, 'nodejs_external_memory_bytes')).toBeGreaterThan(0);
    expect(sample(text, 'nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0);
    expect(text).toContain('nodejs_gc_duration_seconds');
  });

  it('names no tenant or caller, and is not served on the API port', async () => {
    const text = await scrape();
    expect(text).not.toContain(tenant);
    expect(text).not.toContain('acme');
    expect((await fetch(`${app.url.replace(/\/graphql$/, '')}/metrics`)).status).toBe(404);
  });
});
