import { afterEach, describe, expect, it, vi } from 'vitest';
import { Recent } from '../../src/adapters/neo4j/recent.ts';

describe('Recent (hints kept for a while)', () => {
  afterEach(() => vi.useRealTimers());

  it('answers a value until its time-to-live has passed, then nothing', () => {
    vi.useFakeTimers();
    const r = new Recent<number>(1000);
    r.set('a', 1);
    vi.advanceTimersByTime(999);
    expect(r.get('a')).toBe(1);
    vi.advanceTimersByTime(1);
    expect(r.get('a')).toBeUndefined();
  });

  it('a set renews the age, and past its bound the oldest entry goes first', () => {
    vi.useFakeTimers();
    const r = new Recent<string>(1000, 2);
    r.set('a', 'x');
    r.set('b', 'y');
    r.set('a', 'z'); // re-inserted last: b is now the oldest
    r.set('c', 'w');
    expect([r.get('a'), r.get('b'), r.get('c')]).toEqual(['z', undefined, 'w']);
  });
});
