import { describe, expect, it } from 'vitest';
import { covers, effectiveGrants, intersect, normalize } from '../../src/domain/access.ts';
import type { GrantState } from '../../src/domain/fold.ts';
import type { Principal } from '../../src/domain/principal.ts';
import { phrases, rankLexical, terms } from '../../src/recall/lexical.ts';

const principal = (sub: string, actors: Array<{ sub: string }> = []): Principal => ({
  iss: 'iss',
  sub,
  tenant: 't',
  scopes: new Set(['read']),
  actors: actors.map((a) => ({ iss: undefined, sub: a.sub })),
  tokenId: undefined,
  expiresAt: undefined,
});
const grant = (
  sub: string,
  namespace: string,
  maxSensitivity: GrantState['maxSensitivity'],
  purposes: string[] | null = null,
  revokedAt: string | null = null,
): GrantState => ({
  tenant: 't',
  id: `${sub}-${namespace}-${maxSensitivity}`,
  grantee: `iss|${sub}`,
  namespace,
  maxSensitivity,
  purposes,
  grantedBy: 'iss|root',
  grantedAt: '2026-01-01T00:00:00Z',
  revokedAt,
  revokeReason: null,
});
const defaults = { defaultClearance: 'CONFIDENTIAL' as const };

describe('entitlement (access.ts)', () => {
  it('covers: a subtree holds itself and its descendants, not siblings or prefixes of names', () => {
    expect(covers('acme/a', 'acme/a')).toBe(true);
    expect(covers('acme/a', 'acme/a/x')).toBe(true);
    expect(covers('acme/a', 'acme/ab')).toBe(false);
    expect(covers('acme/a/x', 'acme/a')).toBe(false);
    expect(covers(null, 'anything')).toBe(true);
  });

  it('intersect: the deeper subtree and the lower label; disjoint subtrees give nothing', () => {
    expect(
      intersect(
        [{ root: 'acme', maxSensitivity: 'INTERNAL' }],
        [{ root: 'acme/a', maxSensitivity: 'RESTRICTED' }],
      ),
    ).toEqual([{ root: 'acme/a', maxSensitivity: 'INTERNAL' }]);
    expect(
      intersect(
        [{ root: 'acme/a', maxSensitivity: 'PUBLIC' }],
        [{ root: 'acme/b', maxSensitivity: 'PUBLIC' }],
      ),
    ).toEqual([]);
    expect(
      intersect(
        [{ root: null, maxSensitivity: 'CONFIDENTIAL' }],
        [{ root: 'x', maxSensitivity: 'RESTRICTED' }],
      ),
    ).toEqual([{ root: 'x', maxSensitivity: 'CONFIDENTIAL' }]);
  });

  it('normalize drops an entry another covers at an equal or higher label, keeps a deeper higher one', () => {
    expect(
      normalize([
        { root: 'acme', maxSensitivity: 'INTERNAL' },
        { root: 'acme/a', maxSensitivity: 'PUBLIC' },
        { root: 'acme/a', maxSensitivity: 'RESTRICTED' },
        { root: 'acme', maxSensitivity: 'INTERNAL' },
      ]),
    ).toEqual([
      { root: 'acme', maxSensitivity: 'INTERNAL' },
      { root: 'acme/a', maxSensitivity: 'RESTRICTED' },
    ]);
  });

  it('a member without grants gets the tenant default; with grants, only the grants; admin everything', () => {
    expect(effectiveGrants(principal('m'), 'x', [], defaults, false)).toEqual([
      { root: null, maxSensitivity: 'CONFIDENTIAL' },
    ]);
    expect(effectiveGrants(principal('m'), 'x', [], { defaultClearance: null }, false)).toEqual([]);
    expect(effectiveGrants(principal('a'), 'x', [grant('a', 'acme/a', 'PUBLIC')], defaults, false)).toEqual([
      { root: 'acme/a', maxSensitivity: 'PUBLIC' },
    ]);
    expect(effectiveGrants(principal('a'), 'x', [grant('a', 'acme/a', 'PUBLIC')], defaults, true)).toEqual([
      { root: null, maxSensitivity: 'RESTRICTED' },
    ]);
  });

  it('purpose-bound grants apply only when that purpose is stated; revoked grants never', () => {
    const held = [
      grant('b', 'acme/b', 'CONFIDENTIAL', ['incident']),
      grant('b', 'acme/c', 'PUBLIC', null, '2026-02-01T00:00:00Z'),
    ];
    expect(effectiveGrants(principal('b'), 'incident', held, defaults, false)).toEqual([
      { root: 'acme/b', maxSensitivity: 'CONFIDENTIAL' },
    ]);
    expect(effectiveGrants(principal('b'), 'code-change', held, defaults, false)).toEqual([]);
    expect(effectiveGrants(principal('b'), undefined, held, defaults, false)).toEqual([]);
  });

  it("an agent with grants narrows its principal's access; an agent without grants does not widen it", () => {
    const held = [grant('bot', 'acme/a/x', 'RESTRICTED'), grant('alice', 'acme/a', 'INTERNAL')];
    expect(effectiveGrants(principal('alice', [{ sub: 'bot' }]), 'x', held, defaults, false)).toEqual([
      { root: 'acme/a/x', maxSensitivity: 'INTERNAL' },
    ]);
    expect(effectiveGrants(principal('alice', [{ sub: 'nobody' }]), 'x', held, defaults, false)).toEqual([
      { root: 'acme/a', maxSensitivity: 'INTERNAL' },
    ]);
  });
});

describe('lexical ranking over visible candidates (lexical.ts)', () => {
  const docs = [
    { id: 'a', text: 'canary pipeline deploys the payments service' },
    { id: 'b', text: 'canary canary canary' },
    { id: 'c', text: 'nothing relevant here' },
  ];
  it('ranks by BM25 over the candidates only; non-matching candidates drop; ties by id', () => {
    expect(rankLexical('payments canary', docs, 10)).toEqual(['a', 'b']);
    expect(rankLexical('zebra', docs, 10)).toEqual([]);
    expect(
      rankLexical(
        'same',
        [
          { id: 'y', text: 'same' },
          { id: 'x', text: 'same' },
        ],
        10,
      ),
    ).toEqual(['x', 'y']);
  });

  it('the order of two candidates depends only on the candidate set, never on documents outside it', () => {
    const a = rankLexical('canary payments', docs, 10);
    expect(rankLexical('canary payments', [...docs].reverse(), 10)).toEqual(a);
  });

  it('terms and phrases split like the fulltext query', () => {
    expect(terms('The Payments-API, and Postgres 16!')).toEqual(['the', 'payments-api', 'postgres', '16']);
    expect(phrases('what about payments-api now')).toContain('payments-api');
    expect(phrases('what about the payments api')).toContain('payments api');
    expect(phrases('a to')).toEqual(['a to']);
  });
});
