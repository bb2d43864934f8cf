import { cpSync, mkdtempSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decidePropose, ProposeCommand } from '../../src/domain/commands.ts';
import { FileKeyStore } from '../../src/adapters/keys/file-key-store.ts';
import { sealEvents } from '../../src/lifecycle/sealing.ts';
import { freshTenant, startApp, type TestApp } from '../support/harness.ts';
import { writerPrincipal } from '../support/principals.ts';

/**
 * A partition the projector cannot move past is visible to its operators. The case built here is the one
 * sealing.ts stops on by design: a sealed event whose data key this process's key store never held (a
 * writer bound to another key store). Until the key is there the partition waits, /readyz answers 503
 * naming the partition, offsets and error, `projection` (admins) lists the stall with `healthy` false, and
 * the metric `muninn_projection_stalled_seconds` has the partition's series;
 * once the key file is copied in, the event is applied and both clear. The app has its own topic and key
 * store, so the stall holds up no other test.
 */
const topic = `muninn.test.stall.${randomUUID().slice(0, 8)}`;
const keyDir = mkdtempSync(join(tmpdir(), 'muninn-stall-keys-'));
const foreignDir = mkdtempSync(join(tmpdir(), 'muninn-stall-foreign-'));
const tenant = freshTenant('stall');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let app: TestApp;

beforeAll(async () => {
  app = await startApp({
    MUNINN_LEDGER_TOPIC: topic,
    MUNINN_DLQ_TOPIC: `${topic}.dlq`,
    MUNINN_LEDGER_PARTITIONS: '1',
    MUNINN_PROJECTOR_GROUP: `stall-${randomUUID().slice(0, 8)}`,
    MUNINN_KEY_DIR: keyDir,
    MUNINN_PROJECTOR_STALL_AFTER_MS: '1000',
    MUNINN_EMBEDDER: 'hashing',
    MUNINN_METRICS_PORT: '0',
  });
});
afterAll(() => app?.stop());

const STATUS = `{ projection { healthy stalled { partition offsets since attempts error } } }`;
type Status = {
  projection: {
    healthy: boolean;
    stalled: Array<{ partition: number; offsets: string; since: string; attempts: number; error: string }>;
  };
};

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 60_000): Promise<T> {
  let last = await read();
  for (const end = Date.now() + timeoutMs; !ok(last) && Date.now() < end; await sleep(200))
    last = await read();
  return last;
}

function sealedProposal(): ReturnType<typeof decidePropose> {
  const cmd = ProposeCommand.parse({
    namespace: 'acme/stall',
    class: 'FACT',
    statement: {
      subject: 'vault',
      predicate: 'runs on',
      object: 'zephyr',
      text: 'The vault runs on zephyr.',
    },
    purpose: 'stall-test',
    idempotencyKey: 'stall-1',
  });
  return decidePropose(
    { principal: writerPrincipal(tenant), now: new Date(), newId: randomUUID },
    cmd,
    [],
    'ACTIVE',
  );
}

describe('a stalled projection is reported, and clears when the partition moves', () => {
  it('a sealed event whose key this store never held: /readyz 503 and `projection.stalled` name it; the key copied in, both clear and the record is applied', async () => {
    const admin = await app.token({ tenant, scopes: ['read', 'admin'] });
    const reader = await app.token({ tenant, scopes: ['read'] });
    const readyz = async () => {
      const r = await fetch(app.url.replace(/\/graphql$/, '/readyz'));
      return {
        status: r.status,
        body: (await r.json()) as { ready: boolean; checks: Record<string, string> },
      };
    };
    expect((await until(readyz, (r) => r.status === 200)).status).toBe(200);

    const events = sealedProposal();
    const recordId = (events[0]!.payload as { recordId: string }).recordId;
    const sealed = await sealEvents(events, new FileKeyStore(foreignDir));
    expect(sealed[0]).toContain('"sealed"');
    const positions = [];
    for (const value of sealed) positions.push(await app.m.ledger.appendRaw(tenant, value));
    const offset = positions[0]!.offset;

    const stuck = await until(readyz, (r) => r.status === 503 && 'projection' in r.body.checks);
    expect(stuck.status).toBe(503);
    expect(stuck.body.ready).toBe(false);
    expect(stuck.body.checks['projection']).toMatch(
      new RegExp(
        `^stalled: partition 0 at offsets ${offset}\\.\\.\\d+ since .* \\(\\d+ tries\\): .*does not hold`,
      ),
    );
    const status = await app.gql<Status>(admin, STATUS);
    expect(status.errors).toBeUndefined();
    expect(status.data!.projection.healthy).toBe(false);
    expect(status.data!.projection.stalled).toEqual([
      expect.objectContaining({ partition: 0, error: expect.stringContaining('does not hold') }),
    ]);
    expect(status.data!.projection.stalled[0]!.offsets.startsWith(`${offset}..`)).toBe(true);
    expect(status.data!.projection.stalled[0]!.attempts).toBeGreaterThanOrEqual(2);
    const stalledSeconds = async () => {
      const text = await (await fetch(app.m.metrics!.url)).text();
      return /^muninn_projection_stalled_seconds\{partition="0"\} (\S+)$/m.exec(text)?.[1];
    };
    expect(Number(await stalledSeconds())).toBeGreaterThanOrEqual(1);
    // A tenant's member learns only that the projection is unhealthy, not where.
    const member = await app.gql<Status>(reader, STATUS);
    expect(member.data!.projection).toEqual({ healthy: false, stalled: [] });
    // Nothing was applied past the event: the record does not exist yet.
    const READ = `query R($id: ID!) { record(id: $id, purpose: "stall-test") { id status } }`;
    expect((await app.gql<{ record: unknown }>(reader, READ, { id: recordId })).data!.record).toBeNull();

    cpSync(foreignDir, keyDir, { recursive: true });
    const moved = await until(readyz, (r) => r.status === 200);
    expect(moved.body).toMatchObject({ ready: true });
    expect(moved.body.checks['projection']).toBeUndefined();
    expect((await app.gql<Status>(admin, STATUS)).data!.projection).toEqual({ healthy: true, stalled: [] });
    expect(await stalledSeconds()).toBeUndefined();
    const read = await app.gql<{ record: { id: string; status: string } | null }>(reader, READ, {
      id: recordId,
    });
    expect(read.data!.record).toEqual({ id: recordId, status: 'ACTIVE' });
  });
});
