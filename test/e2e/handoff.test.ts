import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { curateAll, type EpisodeDraft } from '../../src/handoff/curator.ts';
import { apiIngest, handoffClient, httpCuratorDeps } from '../../src/client/handoff.ts';
import { isMuninnError } from '../../src/domain/errors.ts';
import { startHandoff, type RunningHandoff } from '../../src/handoff-process.ts';
import { publishWindows, TRANSCRIPT_TEXTS as TEXTS } from '../support/outbox-fixture.ts';
import { freshTenant, gql, startApp, testConfig, type TestApp } from '../support/harness.ts';
import { silentLogger } from '../../src/ports/logger.ts';

/**
 * The Heimdall handoff contract end to end: /handoff on its own process (`startHandoff`, what `muninn
 * handoff serve` runs; state in Neo4j), an outbox written by the exporter, and the curator as an HTTP
 * client of /handoff and of the main API (what `muninn curate` runs) turning windows into CANDIDATE
 * drafts. Seed 000's canaries for credentials, disclosure, leases, checkpoints, restart and failure.
 */

let dir: string;
let outbox: string;
let stream: string;
let tenant: string;
let app: TestApp;
let handoff: RunningHandoff;
const overrides = () => ({
  MUNINN_OUTBOX_DIR: outbox,
  MUNINN_HANDOFF_STREAM: stream,
  MUNINN_AUTH_CLOCK_SKEW_S: '1',
});
/** The handoff process beside the app: same dev keys (state dir), its own port. */
const startHandoffProcess = () =>
  startHandoff(
    testConfig({ ...overrides(), MUNINN_STATE_DIR: app.config.stateDir, MUNINN_HANDOFF_PORT: '0' }),
    silentLogger,
  );

const publish = (n: number, tag: string) => publishWindows(outbox, dir, n, tag);

const handoffToken = (o: { scopes?: string[]; ttlSeconds?: number; audience?: string } = {}) =>
  app.token({
    tenant: 'heimdall',
    sub: 'heimdall',
    scopes: o.scopes ?? ['handoff'],
    ttlSeconds: o.ttlSeconds ?? 120,
    audience: o.audience ?? app.config.auth.handoffAudience,
  });
const hurl = () => handoff.url;
async function h<T = Record<string, unknown>>(
  query: string,
  variables?: Record<string, unknown>,
  token?: string,
) {
  return gql<T>(hurl(), token ?? (await handoffToken()), query, variables);
}
const code = (r: { errors?: ReadonlyArray<{ extensions?: Record<string, unknown> }> | undefined }) =>
  r.errors?.[0]?.extensions?.['code'];
const reason = (r: { errors?: ReadonlyArray<{ extensions?: Record<string, unknown> }> | undefined }) =>
  (r.errors?.[0]?.extensions?.['details'] as Record<string, unknown> | undefined)?.['reason'] ??
  r.errors?.[0]?.extensions?.['reason'];

/** Every file of the outbox with its content hash: what "changes no object or manifest" compares. */
async function snapshot(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const sub of ['objects', 'manifests']) {
    for (const n of await readdir(join(outbox, sub)).catch(() => [] as string[]))
      out[`${sub}/${n}`] = createHash('sha256')
        .update(await readFile(join(outbox, sub, n)))
        .digest('hex');
  }
  return out;
}

const MANIFESTS = `query M($after: Int, $first: Int) { manifests(after: $after, first: $first) {
  items { seq hash prev objects createdAt } hasMore trustedHead breakSeq breakReason } }`;
const ACQUIRE = `mutation A($seq: Int!, $holder: String!, $ttlMs: Int) { acquireLease(seq: $seq, holder: $holder, ttlMs: $ttlMs) { seq holder leaseId manifestHash expiresAt renewed } }`;
const COMMIT = `mutation C($seq: Int!, $hash: String!, $lease: ID!) { commitCheckpoint(seq: $seq, manifestHash: $hash, leaseId: $lease) { seq manifestHash repeated } }`;
type Manifest = { seq: number; hash: string; objects: string[] };
type Lease = { leaseId: string; manifestHash: string; seq: number };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'muninn-handoff-'));
  outbox = join(dir, 'outbox');
  stream = `e2e-${randomUUID().slice(0, 8)}`;
  tenant = freshTenant('curated');
  await publish(3, 'a');
  app = await startApp(overrides());
  handoff = await startHandoffProcess();
});
afterAll(async () => {
  await handoff?.stop();
  await app?.stop();
});

describe('process topology', () => {
  it('the main API does not serve /handoff; the handoff process serves only /handoff and its probes', async () => {
    const onApi = await fetch(app.url.replace(/\/graphql$/, '/handoff'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await handoffToken()}` },
      body: JSON.stringify({ query: '{ checkpoint { seq } }' }),
    });
    expect(onApi.status).toBe(404);
    const base = handoff.url.replace(/\/handoff$/, '');
    expect(base).not.toBe(app.url.replace(/\/graphql$/, ''));
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      ready: true,
      checks: { neo4j: 'ok', migrations: 'ok', outbox: 'ok' },
    });
    expect((await fetch(`${base}/graphql`, { method: 'POST' })).status).toBe(404);
    // a main-API token opens nothing on the handoff surface
    const apiToken = await app.token({ tenant: 'heimdall', sub: 'heimdall', scopes: ['admin', 'handoff'] });
    expect(code(await gql(hurl(), apiToken, '{ checkpoint { seq } }'))).toBe('UNAUTHENTICATED');
  });
});

describe('credentials', () => {
  it('unauthenticated, invalid, expired, wrong-audience, scope-less, long-lived and replayed credentials fail', async () => {
    const q = '{ checkpoint { seq } }';
    expect(code(await gql(hurl(), undefined, q))).toBe('UNAUTHENTICATED');
    expect(code(await gql(hurl(), 'not.a.jwt', q))).toBe('UNAUTHENTICATED');
    expect(
      code(
        await h(
          q,
          {},
          await handoffToken({ ttlSeconds: 1 }).then(async (t) => {
            await new Promise((r) => setTimeout(r, 2200 + app.config.auth.clockSkewS * 1000));
            return t;
          }),
        ),
      ),
    ).toBe('UNAUTHENTICATED');
    expect(code(await h(q, {}, await handoffToken({ audience: app.config.auth.audience })))).toBe(
      'UNAUTHENTICATED',
    );
    expect(code(await h(q, {}, await handoffToken({ scopes: ['admin', 'read', 'write'] })))).toBe(
      'FORBIDDEN',
    );
    expect(code(await h(q, {}, await handoffToken({ ttlSeconds: 3600 })))).toBe('UNAUTHENTICATED');
    const once = await handoffToken();
    expect((await h(q, {}, once)).errors).toBeUndefined();
    expect(code(await h(q, {}, once))).toBe('UNAUTHENTICATED');
    // and a handoff credential opens nothing on the main API
    expect(code(await gql(app.url, await handoffToken(), '{ projection { totalLag } }'))).toBe(
      'UNAUTHENTICATED',
    );
  }, 60_000);
});

describe('disclosure', () => {
  it('health and the manifest listing carry no transcript text; the chain verifies', async () => {
    const health = await h<{ health: Record<string, unknown> }>(
      `{ health { stream status chain { verified trustedHead breakSeq } checkpoint { seq ageMs } backlog
         oldestPendingAgeMs leaseConflicts checkpointConflicts manifestFiles objectFiles namedObjects } }`,
    );
    expect(health.errors).toBeUndefined();
    expect(health.data!.health).toMatchObject({ chain: { verified: true, trustedHead: 3 }, backlog: 3 });
    const list = await h<{ manifests: { items: Manifest[] } }>(MANIFESTS, { after: 0 });
    expect(list.data!.manifests.items.map((m) => m.seq)).toEqual([1, 2, 3]);
    for (const t of TEXTS) {
      expect(JSON.stringify(health)).not.toContain(t);
      expect(JSON.stringify(list)).not.toContain(t);
    }
  });

  it('a window is readable only when a verified manifest names it; oversized requests are refused', async () => {
    const list = await h<{ manifests: { items: Manifest[] } }>(MANIFESTS, { after: 0 });
    const id = list.data!.manifests.items[0]!.objects[0]!;
    const ok = await h<{ window: { content: string } }>(
      `query W($id: ID!) { window(objectId: $id) { content size seq } }`,
      { id },
    );
    expect(ok.data!.window.content).toContain(TEXTS[0]);
    // a valid, content-addressed object that no manifest names
    const stray = '{"stray":true}';
    const strayId = createHash('sha256').update(stray).digest('hex');
    await writeFile(join(outbox, 'objects', `${strayId}.json`), stray);
    const denied = await h(`query W($id: ID!) { window(objectId: $id) { content } }`, { id: strayId });
    expect(code(denied)).toBe('NOT_FOUND');
    expect(code(await h(MANIFESTS, { after: 0, first: 100_000 }))).toBe('BAD_USER_INPUT');
    expect(
      code(await h(`query W($id: ID!) { window(objectId: $id) { content } }`, { id: 'x'.repeat(5000) })),
    ).toBe('BAD_USER_INPUT');
  });
});

describe('leases and the checkpoint', () => {
  let m: Manifest[];
  beforeAll(async () => {
    m = (await h<{ manifests: { items: Manifest[] } }>(MANIFESTS, { after: 0 })).data!.manifests.items;
  });

  it('seq advances 0→1 then one at a time; competing, stale, skip, rewind, changed-hash and inconsistent repeats are CONFLICT', async () => {
    const first = await h<{ acquireLease: Lease }>(ACQUIRE, { seq: 1, holder: 'curator-a', ttlMs: 30_000 });
    expect(first.errors).toBeUndefined();
    const lease = first.data!.acquireLease;
    expect(lease.manifestHash).toBe(m[0]!.hash);
    expect(reason(await h(ACQUIRE, { seq: 1, holder: 'curator-b' }))).toBe('lease-held');
    expect(code(await h(ACQUIRE, { seq: 2, holder: 'curator-b' }))).toBe('CONFLICT');
    expect(reason(await h(COMMIT, { seq: 2, hash: m[1]!.hash, lease: lease.leaseId }))).toBe('not-next-seq');
    expect(reason(await h(COMMIT, { seq: 1, hash: m[1]!.hash, lease: lease.leaseId }))).toBe('hash-mismatch');
    expect(reason(await h(COMMIT, { seq: 1, hash: m[0]!.hash, lease: 'not-a-lease' }))).toBe('lease-unknown');
    const ok = await h<{ commitCheckpoint: { seq: number; repeated: boolean } }>(COMMIT, {
      seq: 1,
      hash: m[0]!.hash,
      lease: lease.leaseId,
    });
    expect(ok.data!.commitCheckpoint).toMatchObject({ seq: 1, repeated: false });
    const again = await h<{ commitCheckpoint: { seq: number; repeated: boolean } }>(COMMIT, {
      seq: 1,
      hash: m[0]!.hash,
      lease: lease.leaseId,
    });
    expect(again.data!.commitCheckpoint).toMatchObject({ seq: 1, repeated: true });
    const other = (await h<{ acquireLease: Lease }>(ACQUIRE, { seq: 2, holder: 'curator-b' })).data!
      .acquireLease;
    expect(reason(await h(COMMIT, { seq: 1, hash: m[0]!.hash, lease: other.leaseId }))).toBe(
      'already-committed',
    );
    const ok2 = await h<{ commitCheckpoint: { seq: number } }>(COMMIT, {
      seq: 2,
      hash: m[1]!.hash,
      lease: other.leaseId,
    });
    expect(ok2.data!.commitCheckpoint.seq).toBe(2);
    expect(reason(await h(COMMIT, { seq: 1, hash: m[0]!.hash, lease: lease.leaseId }))).toBe('rewind');
    const health = await h<{ health: { leaseConflicts: number; checkpointConflicts: number } }>(
      '{ health { leaseConflicts checkpointConflicts } }',
    );
    expect(health.data!.health.leaseConflicts).toBeGreaterThan(0);
    expect(health.data!.health.checkpointConflicts).toBeGreaterThan(0);
  });

  it('an expired lease can be taken over and the stale holder can no longer commit', async () => {
    const a = (await h<{ acquireLease: Lease }>(ACQUIRE, { seq: 3, holder: 'curator-a', ttlMs: 1000 })).data!
      .acquireLease;
    await new Promise((r) => setTimeout(r, 1200));
    const b = await h<{ acquireLease: Lease }>(ACQUIRE, { seq: 3, holder: 'curator-b', ttlMs: 30_000 });
    expect(b.errors).toBeUndefined();
    expect(reason(await h(COMMIT, { seq: 3, hash: m[2]!.hash, lease: a.leaseId }))).toMatch(
      /lease-(expired|unknown)/,
    );
  });

  it('a restart of the handoff process between lease and commit changes no object, manifest or checkpoint', async () => {
    const before = await snapshot();
    const cp = (await h<{ checkpoint: { seq: number } }>('{ checkpoint { seq manifestHash } }')).data!
      .checkpoint;
    await handoff.stop();
    handoff = await startHandoffProcess();
    expect(await snapshot()).toEqual(before);
    expect(
      (await h<{ checkpoint: { seq: number } }>('{ checkpoint { seq manifestHash } }')).data!.checkpoint,
    ).toEqual(cp);
    // the lease taken before the restart is still the one that may commit
    const renewed = await h(ACQUIRE, { seq: 3, holder: 'curator-a' });
    expect(reason(renewed)).toBe('lease-held');
  });
});

describe('curator (an HTTP client of /handoff and of the main API)', () => {
  const HOLDER = 'curator-test';
  const curatorToken = () => app.token({ tenant, sub: 'curator', scopes: ['read', 'write'] });
  const deps = (
    o: {
      handoffToken?: () => Promise<string>;
      apiToken?: () => Promise<string>;
      wrap?: (
        ingest: (ep: EpisodeDraft) => Promise<readonly { outcome: string; recordId: string | null }[]>,
      ) => (ep: EpisodeDraft) => Promise<readonly { outcome: string; recordId: string | null }[]>;
    } = {},
  ) => {
    const d = httpCuratorDeps({
      handoffUrl: hurl(),
      handoffToken: o.handoffToken ?? (() => handoffToken()),
      apiUrl: app.url,
      apiToken: o.apiToken ?? curatorToken,
      holder: HOLDER,
      namespace: 'handoff',
      logger: silentLogger,
    });
    return o.wrap ? { ...d, ingest: o.wrap(apiIngest(app.url, o.apiToken ?? curatorToken)) } : d;
  };
  const checkpoint = async () =>
    (await h<{ checkpoint: { seq: number } }>('{ checkpoint { seq } }')).data!.checkpoint.seq;
  const count = async () => {
    const token = await app.token({ tenant, sub: 'reviewer', scopes: ['read'] });
    const r = await app.gql<{
      records: {
        totalCount: number;
        nodes: Array<{
          status: string;
          class: string;
          statement: { text: string };
          sources: Array<{ episodeId: string }>;
          changesetId: string;
        }>;
      };
    }>(
      token,
      `{ records(filter: {namespace: "handoff", statuses: [CANDIDATE, ACTIVE, CONTESTED]}, first: 500) { totalCount nodes { status changesetId class statement { text } sources { episodeId start end } } } }`,
    );
    expect(r.errors).toBeUndefined();
    return r.data!.records;
  };
  const rejection = async (p: Promise<unknown>) => {
    const e: unknown = await p.then(
      () => null,
      (x: unknown) => x,
    );
    expect(isMuninnError(e), String(e)).toBe(true);
    return e as { code: string; message: string; details: Record<string, unknown> };
  };

  beforeAll(async () => {
    // A fresh stream for the curator: 2 new windows, one per manifest.
    stream = `e2e-${randomUUID().slice(0, 8)}`;
    outbox = join(dir, 'outbox-curator');
    await publish(2, 'c');
    await handoff.stop();
    handoff = await startHandoffProcess();
  });

  it('a bad handoff token or a bad API token is a typed error and commits nothing', async () => {
    const badHandoff = await rejection(curateAll(deps({ handoffToken: async () => 'not.a.jwt' })));
    expect(badHandoff.code).toBe('UNAUTHENTICATED');
    // an API token is not a handoff token
    const apiAsHandoff = await rejection(curateAll(deps({ handoffToken: curatorToken })));
    expect(apiAsHandoff.code).toBe('UNAUTHENTICATED');
    // a handoff token is not an API token: refused at the first ingest, after the lease
    const badApi = await rejection(curateAll(deps({ apiToken: () => handoffToken() })));
    expect(badApi.code).toBe('UNAUTHENTICATED');
    const readOnly = await rejection(
      curateAll(deps({ apiToken: () => app.token({ tenant, sub: 'curator', scopes: ['read'] }) })),
    );
    expect(readOnly.code).toBe('FORBIDDEN');
    for (const e of [badHandoff, apiAsHandoff, badApi, readOnly]) expect(e.message).not.toMatch(/eyJ/);
    // a contract refusal keeps its code and reason through the client
    const skip = await rejection(
      handoffClient(hurl(), () => handoffToken()).commit({
        seq: 2,
        manifestHash: 'a'.repeat(64),
        leaseId: 'x',
      }),
    );
    expect(skip).toMatchObject({ code: 'CONFLICT', details: { reason: 'not-next-seq' } });
    expect(await checkpoint()).toBe(0);
    expect((await count()).totalCount).toBe(0);
  }, 120_000);

  it('an injected failure after drafts were written leaves the checkpoint; the retry creates no duplicate drafts; drafts are CANDIDATE with provenance', async () => {
    let calls = 0;
    const failing = deps({
      wrap: (ingest) => async (ep) => {
        calls++;
        const receipts = await ingest(ep);
        if (calls === 2) throw new Error('injected failure after the second window was written');
        return receipts;
      },
    });
    // One window per manifest: the first step commits seq 1; the second writes its drafts, then fails.
    await expect(curateAll(failing)).rejects.toThrow(/injected/);
    expect(await checkpoint()).toBe(1);
    const afterFailure = await count();
    expect(afterFailure.totalCount).toBeGreaterThan(0);
    // The same holder resumes under its still-live lease (a renewal); another holder would wait for it.
    const done = await curateAll(deps());
    expect(done.map((o) => o.kind)).toEqual(['committed', 'idle']);
    expect(done[0]).toMatchObject({ kind: 'committed', seq: 2, windows: 1, repeated: false });
    expect(await checkpoint()).toBe(2);
    const after = await count();
    // Both windows were ingested before the injected failure; the retry re-ingested the second with the
    // same keys (derived from the object id): not one draft more.
    expect(after.totalCount).toBe(afterFailure.totalCount);
    expect(new Set(after.nodes.map((n) => JSON.stringify([n.class, n.statement.text, n.sources]))).size).toBe(
      after.totalCount,
    );
    for (const n of after.nodes) {
      expect(n.status).toBe('CANDIDATE');
      expect(n.sources.length).toBeGreaterThan(0);
      expect(n.changesetId).toMatch(/^handoff:seq:\d+$/);
    }
    // A third run finds nothing to do and changes nothing.
    expect((await curateAll(deps())).map((o) => o.kind)).toEqual(['idle']);
    expect((await count()).totalCount).toBe(after.totalCount);
  }, 180_000);
});
