import { describe, expect, it } from 'vitest';
import type { ProjectionWrite, StateKeys } from '../../src/ports/graph.ts';
import { WrittenKeys } from '../../src/projector/written-keys.ts';

/* A rebuild loads only keys it has written before: the graph was emptied, so no other can exist. */

const keys = (ids: string[], tenant = 't1'): StateKeys => ({
  records: ids.map((id) => ({ tenant, id })),
  entities: ids.map((id) => ({ tenant, id })),
  receipts: ids.map((id) => ({ tenant, idempotencyKey: id })),
  episodes: [],
  grants: ids.map((id) => ({ tenant, id })),
});

const wrote = (ids: string[], tenant = 't1'): ProjectionWrite =>
  ({
    records: ids.map((id) => ({ tenant, id })),
    entities: [],
    receipts: ids.map((id) => ({ tenant, idempotencyKey: id })),
    episodes: [],
    grants: [],
  }) as unknown as ProjectionWrite;

describe('WrittenKeys', () => {
  it('lets no key through before anything was written', () => {
    const w = new WrittenKeys();
    const k = w.mayExist(keys(['a', 'b']));
    expect([k.records, k.entities, k.receipts, k.grants]).toEqual([[], [], [], []]);
  });

  it('lets through exactly the keys written before, by kind and tenant', () => {
    const w = new WrittenKeys();
    w.note(wrote(['a']));
    const k = w.mayExist(keys(['a', 'b']));
    expect(k.records).toEqual([{ tenant: 't1', id: 'a' }]);
    expect(k.receipts).toEqual([{ tenant: 't1', idempotencyKey: 'a' }]);
    // Same id, other kind (an entity, a grant) or other tenant: never written.
    expect(k.entities).toEqual([]);
    expect(k.grants).toEqual([]);
    expect(w.mayExist(keys(['a'], 't2')).records).toEqual([]);
  });

  it('lets every key through once it holds more than its bound (memory stays bounded)', () => {
    const w = new WrittenKeys(3);
    w.note(wrote(['a', 'b'])); // 4 keys: 2 records + 2 receipts
    const all = keys(['x', 'y']);
    expect(w.mayExist(all)).toBe(all);
  });
});
