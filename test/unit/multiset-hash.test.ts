import { describe, expect, it } from 'vitest';
import { MultisetHash } from '../../src/domain/multiset-hash.ts';

/** The state hash's digest of a multiset of lines (src/domain/multiset-hash.ts). */
const digest = (lines: readonly string[]) => {
  const h = new MultisetHash();
  for (const l of lines) h.add(l);
  return h.digest();
};

describe('a digest of lines in any order', () => {
  it('the same lines in any order give the same digest', () => {
    const lines = Array.from({ length: 50 }, (_, i) => `N{"id":"r${i}"}`);
    expect(digest([...lines].reverse())).toBe(digest(lines));
    expect(digest(lines)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a line added, dropped, changed or repeated changes it', () => {
    const lines = ['a', 'b', 'c'];
    const d = digest(lines);
    expect(digest([...lines, 'd'])).not.toBe(d);
    expect(digest(['a', 'b'])).not.toBe(d);
    expect(digest(['a', 'b', 'C'])).not.toBe(d);
    expect(digest([...lines, 'c'])).not.toBe(d);
    expect(digest(['a', 'a', 'b', 'b'])).not.toBe(digest([]));
    expect(digest([])).not.toBe(digest(['']));
  });
});
