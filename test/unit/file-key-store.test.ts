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
