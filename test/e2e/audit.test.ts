import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { AuditEntry } from '../../src/domain/audit-chain.ts';
import { freshTenant, PROPOSE, proposal, startApp, type TestApp } from '../support/harness.ts';
import { REPO } from '../support/mcp.ts';

/**
 * The audit trail of a running Muninn on the real stack: each read path leaves exactly one entry with
 * its purpose and the ids it returned, each write one with what it wrote; `muninn audit verify` accepts
 * the file and names the line of a tampered entry. Purpose on reads: a purpose-bound grant opens
 * record, records, history and expand (and their nested fields) only under that purpose.
 */
let app: TestApp;
let admin: string;
let erin: string;
let recordId: string;
const tenant = freshTenant('audit');
const NS = 'acme/audit';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const GRANT = `mutation G($input: GrantAccessInput!) { grantAccess(input: $input) { outcome grantId } }`;

// The spans the app emits go to whichever tracer provider is registered: here an in-memory one.
const spans = new InMemorySpanExporter();
trace.setGlobalTracerProvider(
  new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] }),
);

beforeAll(async () => {
  // Nobody sees anything without a grant: erin's only grant is for the purpose "incident".
  app = await startApp({ MUNINN_DEFAULT_CLEARANCE: 'NONE' });
  admin = await app.token({ tenant, sub: 'root', scopes: ['admin'] });
  erin = await app.token({ tenant, sub: 'erin', scopes: ['read'] });
  const g = await app.gql(admin, GRANT, {
    input: {
      grantee: { sub: 'erin' },
      namespace: NS,
      maxSensitivity: 'INTERNAL',
      purposes: ['incident'],
      reason: 'on call',
      idempotencyKey: randomUUID(),
    },
  });
  expect(g.errors).toBeUndefined();
  const p = await app.gql<{ propose: { recordId: string; outcome: string } }>(admin, PROPOSE, {
    input: proposal({ namespace: NS, await: true }),
  });
  expect(p.data!.propose.outcome).toBe('ADMITTED');
  recordId = p.data!.propose.recordId;
});
afterAll(() => app?.stop());

/** The trail's complete lines: an append still being written has no newline yet (a CI run read one). */
const entries = (): AuditEntry[] => {
  const text = readFileSync(app.m.audit!.file, 'utf8');
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEntry);
};

/** Runs `f` and returns the audit entries it added (appends are asynchronous: wait for them). */
async function added(f: () => Promise<unknown>, expected = 1): Promise<AuditEntry[]> {
  // Earlier calls' appends may still be on their way: start from a trail that has stopped growing.
  for (let n = -1; n !== entries().length; await sleep(150)) n = entries().length;
  const before = entries().length;
  await f();
  for (let i = 0; i < 100 && entries().length < before + expected; i++) await sleep(50);
  await sleep(100); // and nothing more arrives
  return entries().slice(before);
}

const READS: Array<[string, string, (id: string) => Record<string, unknown>]> = [
  [
    'query.record',
    `query Q($id: ID!, $p: String) { record(id: $id, purpose: $p) { id history { version } } }`,
    (id) => ({ id }),
  ],
  [
    'query.records',
    `query Q($p: String) { records(filter: { namespace: "${NS}" }, purpose: $p) { nodes { id about { id } } } }`,
    () => ({}),
  ],
  [
    'query.history',
    `query Q($id: ID!, $p: String) { history(id: $id, purpose: $p) { version } }`,
    (id) => ({ id }),
  ],
];

describe('purpose on reads', () => {
  it.each(READS)('%s: a purpose-bound grant opens it under its purpose only', async (_op, q, vars) => {
    const none = await app.gql<Record<string, unknown>>(erin, q, vars(recordId));
    const wrong = await app.gql<Record<string, unknown>>(erin, q, { ...vars(recordId), p: 'marketing' });
    const right = await app.gql<Record<string, unknown>>(erin, q, { ...vars(recordId), p: 'incident' });
    for (const r of [none, wrong, right]) expect(r.errors).toBeUndefined();
    expect(JSON.stringify(none.data)).not.toContain(recordId);
    expect(JSON.stringify(wrong.data)).not.toContain(recordId);
    if (_op === 'query.history') expect((right.data!['history'] as unknown[]).length).toBeGreaterThan(0);
    else expect(JSON.stringify(right.data)).toContain(recordId);
  });

  it('a purpose that is not one is BAD_USER_INPUT', async () => {
    const r = await app.gql(erin, READS[0]![1], { id: recordId, p: '' });
    expect(r.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
  });
});

describe('audit trail', () => {
  it.each(READS)(
    '%s leaves exactly one entry with its purpose and the ids it returned',
    async (op, q, vars) => {
      const got = await added(() => app.gql(erin, q, { ...vars(recordId), p: 'incident' }));
      expect(got).toHaveLength(1);
      expect(got[0]).toMatchObject({ kind: 'read', op, tenant, who: `${app.config.auth.issuer}|erin` });
      expect(got[0]!.purpose).toBe('incident');
      expect(got[0]!.code).toBe('OK');
      if (op !== 'query.history') expect(got[0]!.ids).toContain(recordId);
    },
  );

  it('recall and expand leave one entry each, with the recall purpose and the items returned', async () => {
    let handle = '';
    const got = await added(async () => {
      const r = await app.gql<{ recall: { items: Array<{ handle: string; record: { id: string } }> } }>(
        erin,
        `query R($input: RecallInput!) { recall(input: $input) { items { handle record { id } } } }`,
        { input: { query: 'which service uses postgres', namespace: NS, purpose: 'incident' } },
      );
      expect(r.errors).toBeUndefined();
      handle = r.data!.recall.items.find((i) => i.record.id === recordId)!.handle;
    });
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ op: 'query.recall', purpose: 'incident', code: 'OK' });
    expect(got[0]!.ids).toContain(recordId);
    const ex = await added(() =>
      app.gql(erin, `query E($h: ID!) { expand(handle: $h, purpose: "incident") { id } }`, { h: handle }),
    );
    expect(ex).toHaveLength(1);
    expect(ex[0]).toMatchObject({ op: 'query.expand', purpose: 'incident', ids: [recordId] });
  });

  it('a write leaves one entry with what it wrote; a refused one its code', async () => {
    const ok = await added(() =>
      app.gql(admin, PROPOSE, { input: proposal({ namespace: NS, await: true }) }),
    );
    expect(ok).toHaveLength(1);
    expect(ok[0]).toMatchObject({ kind: 'write', op: 'mutation.propose', purpose: 'test', code: 'OK' });
    expect(ok[0]!.ids.length).toBeGreaterThan(0);
    const refused = await added(() => app.gql(erin, PROPOSE, { input: proposal({ namespace: NS }) }));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ kind: 'write', op: 'mutation.propose' });
    expect(refused[0]!.code).toBe('FORBIDDEN');
  });

  it('each audited operation is also an OpenTelemetry span carrying the entry as its audit event', async () => {
    spans.reset();
    await added(() => app.gql(erin, READS[0]![1], { id: recordId, p: 'incident' }));
    const span = spans.getFinishedSpans().find((x) => x.name === 'query.record');
    expect(span).toBeDefined();
    expect(span!.attributes).toMatchObject({
      'muninn.kind': 'read',
      'muninn.purpose': 'incident',
      'muninn.code': 'OK',
      'muninn.who': `${app.config.auth.issuer}|erin`,
    });
    const event = span!.events.find((e) => e.name === 'audit');
    expect(event?.attributes?.['muninn.ids']).toContain(recordId);
  });

  it('muninn audit verify accepts the trail and names the line of a tampered entry', async () => {
    const verify = () =>
      spawnSync(
        'node',
        ['--import', 'tsx', 'src/cli/main.ts', 'audit', 'verify', '--dir', dirname(app.m.audit!.file)],
        {
          cwd: REPO,
          env: { ...process.env, MUNINN_STATE_DIR: app.config.stateDir },
          encoding: 'utf8',
        },
      );
    const good = verify();
    expect(good.status, good.stderr).toBe(0);
    expect(good.stdout).toMatch(/1 files, 0 failed/);
    const lines = readFileSync(app.m.audit!.file, 'utf8').split('\n');
    const e = JSON.parse(lines[1]!) as AuditEntry;
    lines[1] = JSON.stringify({ ...e, purpose: 'something else' });
    writeFileSync(app.m.audit!.file, lines.join('\n'));
    const bad = verify();
    expect(bad.status).toBe(1);
    expect(bad.stdout).toMatch(/FAIL .*line 2: MAC does not match/);
  });
});
