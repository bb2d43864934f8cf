import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileKeyStore } from '../../src/adapters/keys/file-key-store.ts';

/** The local key store's files (src/adapters/keys/file-key-store.ts), in a temporary directory. */
describe('the file key store', () => {
  it('creates each key once, in a directory made once, and again after the directories were removed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'muninn-keys-'));
    const keys = new FileKeyStore(dir, 0);
    const ids = Array.from({ length: 40 }, (_, i) => `record:t1:r${i}`);
    const first = await keys.forSealing(ids);
    expect(first.size).toBe(40);
    // Read back from the files (no cache): the same bytes.
    for (const id of ids) expect(await keys.forOpening(id)).toEqual(first.get(id));
    expect(readdirSync(dir).length).toBeGreaterThan(1);
    // Every directory removed under the store: new keys are still written, old ones are gone.
    for (const d of readdirSync(dir)) rmSync(join(dir, d), { recursive: true });
    const again = await keys.forSealing(['record:t1:new']);
    expect(await keys.forOpening('record:t1:new')).toEqual(again.get('record:t1:new'));
    expect(await keys.state('record:t1:r0')).toBe('ABSENT');
  });
});

describe('two stores on one directory (two processes)', () => {
  it('agree on one key per id when they create the same ids at once, and leave no temp file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'muninn-keys-'));
    const a = new FileKeyStore(dir, 0);
    const b = new FileKeyStore(dir, 0);
    const ids = Array.from({ length: 60 }, (_, i) => `entity:t1:e${i}`);
    const [fromA, fromB] = await Promise.all([a.forSealing(ids), b.forSealing([...ids].reverse())]);
    for (const id of ids) {
      expect(fromA.get(id)).toEqual(fromB.get(id));
      expect(await a.forOpening(id)).toEqual(fromA.get(id));
    }
    const files = readdirSync(dir, { recursive: true }).map(String);
    expect(files.filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(files.filter((f) => f.endsWith('.json'))).toHaveLength(60);
  });

  it("one store's destroy is seen by the other: it opens nothing and creates nothing for that id", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'muninn-keys-'));
    const a = new FileKeyStore(dir, 0);
    const b = new FileKeyStore(dir, 0);
    await a.forSealing(['record:t1:gone', 'record:t1:kept']);
    await b.destroy(['record:t1:gone']);
    expect(await a.forOpening('record:t1:gone')).toBeNull();
    expect(await a.state('record:t1:gone')).toBe('DESTROYED');
    await expect(a.forSealing(['record:t1:kept', 'record:t1:gone'])).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    expect(await a.state('record:t1:kept')).toBe('ACTIVE');
  });
});
