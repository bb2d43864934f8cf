import { mkdtemp, readFile, readdir, rm, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/canonical.ts';
import { acquireLock, nodeOutboxStore } from '../../src/adapters/files/outbox-dir.ts';
import { appendManifest as appendManifestIn } from '../../src/handoff/outbox.ts';
import { OutboxConflictError, type OutboxStore, type PublishStep } from '../../src/ports/outbox.ts';
import { appendManifest, publishObject, verifyChain } from '../support/outbox-dir.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'muninn-outbox-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const finalNames = async (sub: string): Promise<string[]> =>
  (await readdir(join(dir, sub))).filter((n) => !n.startsWith('.')).sort();
const STEPS: PublishStep[] = ['temp-written', 'temp-synced', 'linked', 'dir-synced', 'temp-removed'];
const crashAt = (at: PublishStep, record: 'object' | 'manifest' = 'object') => ({
  afterStep(step: PublishStep, r: 'object' | 'manifest') {
    if (step === at && r === record) throw new Error(`crash after ${step}`);
  },
});

describe('publishObject', () => {
  it('content-addresses objects and verifies identical retries', async () => {
    const a = await publishObject(dir, { b: 1, a: [1, 2] });
    expect(a.created).toBe(true);
    const bytes = await readFile(join(dir, 'objects', `${a.id}.json`));
    expect(sha256Hex(bytes)).toBe(a.id);
    expect(bytes.toString()).toBe('{"a":[1,2],"b":1}');
    const again = await publishObject(dir, { a: [1, 2], b: 1 });
    expect(again).toEqual({ id: a.id, created: false });
    expect((await readdir(join(dir, 'objects'))).filter((n) => n.startsWith('.tmp'))).toEqual([]);
  });

  it('refuses to accept an existing name whose bytes differ', async () => {
    const a = await publishObject(dir, { x: 1 });
    await writeFile(join(dir, 'objects', `${a.id}.json`), '{"x":2}');
    await expect(publishObject(dir, { x: 1 })).rejects.toBeInstanceOf(OutboxConflictError);
  });

  it.each(STEPS)(
    'a crash after %s leaves no object or a complete one, and a retry completes',
    async (step) => {
      const obj = { schema: 't/1', text: 'hello' };
      await expect(publishObject(dir, obj, crashAt(step))).rejects.toThrow(/crash/);
      const names = await finalNames('objects');
      expect(names.length).toBeLessThanOrEqual(1);
      for (const n of names) {
        const bytes = await readFile(join(dir, 'objects', n));
        expect(`${sha256Hex(bytes)}.json`).toBe(n); // complete, never partial
      }
      const before = ['temp-written', 'temp-synced'].includes(step);
      expect(names.length).toBe(before ? 0 : 1);
      const retry = await publishObject(dir, obj);
      expect(retry.created).toBe(before);
      expect(await finalNames('objects')).toEqual([`${retry.id}.json`]);
    },
  );

  it('creates private files (mode 0600)', async () => {
    const a = await publishObject(dir, { m: 1 });
    const { stat } = await import('node:fs/promises');
    expect((await stat(join(dir, 'objects', `${a.id}.json`))).mode & 0o777).toBe(0o600);
  });
});

describe('manifest chain', () => {
  it('appends seq = last + 1 with the previous hash, and is idempotent per object', async () => {
    const a = await publishObject(dir, { n: 1 });
    const b = await publishObject(dir, { n: 2 });
    const m1 = await appendManifest(dir, [a.id]);
    const m2 = await appendManifest(dir, [b.id]);
    expect([m1.seq, m2.seq]).toEqual([1, 2]);
    const again = await appendManifest(dir, [a.id]);
    expect(again).toEqual({ seq: 1, hash: m1.hash, created: false });
    const chain = await verifyChain(dir);
    expect(chain.ok).toBe(true);
    if (!chain.ok) return;
    expect(chain.manifests.map((m) => [m.seq, m.manifest.prev])).toEqual([
      [1, null],
      [2, m1.hash],
    ]);
    expect(chain.head).toEqual({ seq: 2, hash: m2.hash });
  });

  it('refuses to name a missing object', async () => {
    await expect(appendManifest(dir, ['0'.repeat(64)])).rejects.toThrow(/missing/);
  });

  it('detects a tampered object, a tampered manifest, a removed manifest and truncation', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const o = await publishObject(dir, { i });
      ids.push(o.id);
      await appendManifest(dir, [o.id]);
    }
    const good = await verifyChain(dir);
    expect(good.ok).toBe(true);
    if (!good.ok || !good.head) return;
    const checkpoint = good.head;

    const objPath = join(dir, 'objects', `${ids[1]}.json`);
    const objBytes = await readFile(objPath);
    await writeFile(objPath, '{"i":99}');
    expect(await verifyChain(dir)).toMatchObject({
      ok: false,
      break: { seq: 2, reason: 'OBJECT_MISSING_OR_CORRUPT' },
    });
    await writeFile(objPath, objBytes);

    const m2Path = join(dir, 'manifests', '000000000002.json');
    const m2 = await readFile(m2Path, 'utf8');
    await writeFile(m2Path, m2.replace(/"createdAt":"[^"]+"/, '"createdAt":"1999-01-01T00:00:00.000Z"'));
    expect(await verifyChain(dir)).toMatchObject({
      ok: false,
      break: { seq: 3, reason: 'PREV_HASH_MISMATCH' },
    });
    await writeFile(m2Path, m2.replace('{', '{ '));
    expect(await verifyChain(dir)).toMatchObject({ ok: false, break: { seq: 2, reason: 'NOT_CANONICAL' } });
    await writeFile(m2Path, m2);
    expect((await verifyChain(dir)).ok).toBe(true);

    await unlink(m2Path);
    expect(await verifyChain(dir)).toMatchObject({ ok: false, break: { seq: 2, reason: 'SEQUENCE_GAP' } });
    await writeFile(m2Path, m2);

    await unlink(join(dir, 'manifests', '000000000003.json'));
    expect(await verifyChain(dir, { checkpoint })).toMatchObject({
      ok: false,
      break: { reason: 'CHECKPOINT_MISMATCH' },
    });
    // Appending is refused on a broken chain.
    await writeFile(m2Path, m2.replace('{', '{ '));
    await expect(appendManifest(dir, [ids[2]!])).rejects.toThrow(/chain broken/);
  });

  it.each(STEPS)(
    'a crash after %s during manifest publication never leaves a partial manifest',
    async (step) => {
      const o = await publishObject(dir, { k: 'v' });
      await expect(appendManifest(dir, [o.id], { hooks: crashAt(step, 'manifest') })).rejects.toThrow(
        /crash/,
      );
      const chain = await verifyChain(dir);
      expect(chain.ok).toBe(true);
      const before = ['temp-written', 'temp-synced'].includes(step);
      expect(await finalNames('manifests')).toEqual(before ? [] : ['000000000001.json']);
      // The lock was released and a retry converges on exactly one manifest.
      const retry = await appendManifest(dir, [o.id]);
      expect(retry).toMatchObject({ seq: 1, created: before });
      expect(await finalNames('manifests')).toEqual(['000000000001.json']);
    },
  );

  it('reports created: false when the store already held these very manifest bytes', async () => {
    const o = await publishObject(dir, { k: 'v' });
    const store = nodeOutboxStore(dir);
    // A store that finds the manifest's bytes already in place (its publish answers false).
    const found: OutboxStore = {
      ...store,
      publish: async (kind, name, bytes, hooks) =>
        (await store.publish(kind, name, bytes, hooks)) && kind !== 'manifest',
    };
    const r = await appendManifestIn(found, [o.id]);
    expect(r).toMatchObject({ seq: 1, created: false });
    expect(await finalNames('manifests')).toEqual(['000000000001.json']);
  });

  it('concurrent exporters form one gap-free, fork-free chain', async () => {
    const objs = await Promise.all(Array.from({ length: 12 }, (_, i) => publishObject(dir, { c: i })));
    // Every object twice, all at once: two exporters racing over the same windows.
    const results = await Promise.all([...objs, ...objs].map((o) => appendManifest(dir, [o.id])));
    const chain = await verifyChain(dir);
    expect(chain.ok).toBe(true);
    if (!chain.ok) return;
    expect(chain.manifests.map((m) => m.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    const named = chain.manifests.flatMap((m) => m.manifest.objects).sort();
    expect(named).toEqual(objs.map((o) => o.id).sort());
    expect(results.filter((r) => r.created)).toHaveLength(12);
  });

  it('takes over a stale lock and times out on a live one', async () => {
    const o = await publishObject(dir, { s: 1 });
    const lock = join(dir, 'manifests', '.lock');
    await writeFile(lock, 'dead-exporter');
    const old = new Date(Date.now() - 120_000);
    await utimes(lock, old, old);
    expect((await appendManifest(dir, [o.id], { lock: { staleMs: 60_000 } })).seq).toBe(1);

    const release = await acquireLock(lock);
    const o2 = await publishObject(dir, { s: 2 });
    await expect(appendManifest(dir, [o2.id], { lock: { timeoutMs: 100 } })).rejects.toThrow(/lock busy/);
    await release();
    expect((await appendManifest(dir, [o2.id])).seq).toBe(2);
  });
});
