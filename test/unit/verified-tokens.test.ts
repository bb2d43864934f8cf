import { describe, expect, it } from 'vitest';
import type { CryptoKey } from 'jose';
import { VerifiedTokens, type VerifiedToken } from '../../src/adapters/auth/verified-tokens.ts';
import type { Principal } from '../../src/domain/principal.ts';

/** The tokens a verifier has already checked (src/adapters/auth/verified-tokens.ts): a bounded LRU. */
const entry = (sub: string): VerifiedToken => ({
  principal: { sub } as unknown as Principal,
  key: {} as CryptoKey,
  exp: 0,
});

describe('tokens already checked', () => {
  it('keeps at most `max`, dropping the least recently used first', () => {
    const t = new VerifiedTokens(2);
    t.set('a', entry('a'));
    t.set('b', entry('b'));
    expect(t.get('a')?.principal.sub).toBe('a'); // a is now the most recently used
    t.set('c', entry('c'));
    expect(t.size).toBe(2);
    expect(t.get('b')).toBeUndefined();
    expect(t.get('a')?.principal.sub).toBe('a');
    expect(t.get('c')?.principal.sub).toBe('c');
  });

  it('holds nothing with max 0, and forgets a deleted token', () => {
    const none = new VerifiedTokens(0);
    none.set('a', entry('a'));
    expect(none.size).toBe(0);
    const t = new VerifiedTokens(4);
    t.set('a', entry('a'));
    t.delete('a');
    expect(t.get('a')).toBeUndefined();
  });
});
