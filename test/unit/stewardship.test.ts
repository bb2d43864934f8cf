import { describe, expect, it } from 'vitest';
import type { EventOf } from '../../src/domain/events.ts';
import type { GrantState } from '../../src/domain/fold.ts';
import { MemoryState } from '../../src/domain/memory-state.ts';
import { median, reviewByOf, scorecardOf, type ScoreRow } from '../../src/domain/scorecard.ts';
import {
  candidateFindings,
  commonNamespace,
  contestedFindings,
  DEFAULT_STEWARD_THRESHOLDS as TH,
  duplicateFindings,
  findingIdOf,
  lowUtilityFindings,
  orphanFindings,
  planFindings,
  staleFindings,
  stewardshipOf,
} from '../../src/domain/stewardship.ts';
import { FindingTypes } from '../../src/domain/stewardship-model.ts';

/* The steward's pure parts (issue #14): each check, the run plan, owners and stewards, scorecard math. */

const T = 'acme';
const NOW = new Date('2026-06-01T00:00:00.000Z');
const daysAgo = (d: number) => new Date(NOW.getTime() - d * 86_400_000).toISOString();

describe('steward checks', () => {
  it('stale: past validTo or reviewBy is a finding (HIGH for a norm), within both is not', () => {
    const f = staleFindings(
      T,
      [
        { id: 'r1', namespace: 'acme/a', class: 'FACT', validTo: daysAgo(1), reviewBy: null },
        { id: 'r2', namespace: 'acme/a', class: 'NORMATIVE', validTo: daysAgo(1), reviewBy: null },
        { id: 'r3', namespace: 'acme/a', class: 'FACT', validTo: null, reviewBy: daysAgo(2) },
        { id: 'r4', namespace: 'acme/a', class: 'FACT', validTo: daysAgo(-3), reviewBy: daysAgo(-1) },
      ],
      NOW,
    );
    expect(f.map((x) => [x.recordIds[0], x.severity])).toEqual([
      ['r1', 'MEDIUM'],
      ['r2', 'HIGH'],
      ['r3', 'MEDIUM'],
    ]);
    expect(f[2]!.reason).toContain('not reviewed by');
  });

  it('contested pairs and waiting candidates count only past their thresholds', () => {
    const contested = contestedFindings(
      T,
      [
        { a: 'x', b: 'y', namespace: 'acme/a', since: daysAgo(TH.contestedDays) },
        { a: 'p', b: 'q', namespace: 'acme/a', since: daysAgo(TH.contestedDays - 1) },
        { a: 'm', b: 'n', namespace: 'acme/a', since: daysAgo(2 * TH.contestedDays) },
      ],
      NOW,
      TH,
    );
    expect(contested.map((c) => [c.recordIds, c.severity])).toEqual([
      [['x', 'y'], 'MEDIUM'],
      [['m', 'n'], 'HIGH'],
    ]);
    const waiting = candidateFindings(
      T,
      [
        { id: 'c1', namespace: 'acme/a', createdAt: daysAgo(TH.candidateDays + 1) },
        { id: 'c2', namespace: 'acme/a', createdAt: daysAgo(0) },
      ],
      NOW,
      TH,
    );
    expect(waiting.map((w) => w.recordIds[0])).toEqual(['c1']);
  });

  it('near-duplicates: at or above the cosine threshold, each pair once, never a record with itself', () => {
    const f = duplicateFindings(
      T,
      [
        { a: 'a', b: 'b', namespace: 'acme/a', cosine: 0.99 },
        { a: 'b', b: 'a', namespace: 'acme/a', cosine: 0.99 },
        { a: 'c', b: 'd', namespace: 'acme/a', cosine: TH.duplicateCosine - 0.01 },
        { a: 'e', b: 'e', namespace: 'acme/a', cosine: 1 },
      ],
      TH,
    );
    expect(f.map((x) => x.recordIds)).toEqual([['a', 'b']]);
  });

  it('near-duplicates: a pair whose statements name other identifiers is two things, however alike', () => {
    const row = (a: string, b: string, texts: [string, string]) => ({
      a,
      b,
      namespace: 'acme/a',
      cosine: 0.995,
      texts,
    });
    const f = duplicateFindings(
      T,
      [
        row('w1', 'w2', [
          'ledger-writer-1ad620 zephyr The ledger writer 1ad620 runs on the zephyr cluster.',
          'ledger-writer-98b1f6 zephyr The ledger writer 98b1f6 runs on the zephyr cluster.',
        ]),
        row('p1', 'p2', [
          'payments-api postgres 16 The payments API uses Postgres 16.',
          'payments api postgres 16 Payments API runs on Postgres 16.',
        ]),
      ],
      TH,
    );
    expect(f.map((x) => x.recordIds)).toEqual([['p1', 'p2']]);
  });

  it('low utility needs enough votes; orphans belong to the deepest common namespace', () => {
    const low = lowUtilityFindings(
      T,
      [
        { id: 'u1', namespace: 'acme/a', utility: -0.6, votes: 4, wrong: 3 },
        { id: 'u2', namespace: 'acme/a', utility: -0.6, votes: 1, wrong: 1 },
        { id: 'u3', namespace: 'acme/a', utility: 0.4, votes: 9, wrong: 0 },
      ],
      TH,
    );
    expect(low.map((x) => [x.recordIds[0], x.severity])).toEqual([['u1', 'HIGH']]);
    const orphans = orphanFindings(T, [
      { entityId: 'e1', namespaces: ['acme/a/x', 'acme/a/y'] },
      { entityId: 'e2', namespaces: [] },
    ]);
    expect(orphans.map((o) => [o.entityIds, o.namespace])).toEqual([[['e1'], 'acme/a']]);
    expect(commonNamespace(['acme/a', 'beta/b'])).toBeNull();
  });

  it('a finding id depends on the tenant, type and set of ids, not their order', () => {
    expect(findingIdOf(T, 'CONTESTED_PAIR', ['a', 'b'])).toBe(findingIdOf(T, 'CONTESTED_PAIR', ['b', 'a']));
    expect(findingIdOf(T, 'CONTESTED_PAIR', ['a', 'b'])).not.toBe(
      findingIdOf('other', 'CONTESTED_PAIR', ['a', 'b']),
    );
    expect(findingIdOf(T, 'NEAR_DUPLICATE', ['a', 'b'])).not.toBe(
      findingIdOf(T, 'CONTESTED_PAIR', ['a', 'b']),
    );
  });
});

describe('run plan', () => {
  const [a, b] = staleFindings(
    T,
    [
      { id: 'r1', namespace: 'acme/a', class: 'FACT', validTo: daysAgo(1), reviewBy: null },
      { id: 'r2', namespace: 'acme/a', class: 'FACT', validTo: daysAgo(1), reviewBy: null },
    ],
    NOW,
  );
  const all = new Set(FindingTypes);

  it('raises what is new, never what is open, and resolves what no longer holds', () => {
    const gone = { id: 'old', type: 'STALE' as const };
    const p = planFindings([a!, b!, a!], [{ id: a!.id, type: 'STALE' }, gone], all);
    expect(p.raise.map((x) => x.id)).toEqual([b!.id]);
    expect(p.resolve).toEqual(['old']);
  });

  it('leaves open findings of types the run did not check', () => {
    expect(planFindings([], [{ id: 'x', type: 'LOW_UTILITY' }], new Set(['STALE'])).resolve).toEqual([]);
  });
});

describe('finding events in the fold', () => {
  const env = (type: string, key: string, at: string) => ({
    eventId: '00000000-0000-4000-8000-' + key.padStart(12, '0'),
    type,
    schemaVersion: 1,
    tenant: T,
    namespace: 'acme/a',
    idempotencyKey: `steward-${key}`,
    commandHash: '0'.repeat(64),
    principal: { iss: 'muninn', sub: 'steward' },
    actors: [],
    purpose: 'stewardship',
    changesetId: null,
    recordedAt: at,
  });
  const raise = (key: string): EventOf<'FindingRaised'> =>
    ({
      ...env('FindingRaised', key, daysAgo(Number(key))),
      payload: {
        findingId: 'f1',
        findingType: 'STALE',
        severity: 'MEDIUM',
        recordIds: ['r1'],
        entityIds: [],
        reason: 'x',
      },
    }) as EventOf<'FindingRaised'>;
  const resolve = (key: string, dismissed = false): EventOf<'FindingResolved'> =>
    ({
      ...env('FindingResolved', key, daysAgo(Number(key))),
      payload: { findingId: 'f1', reason: 'gone', dismissed },
    }) as EventOf<'FindingResolved'>;

  it('an open finding raised again is a duplicate; resolved, it reopens and counts the raise', () => {
    const s = new MemoryState();
    s.apply(raise('9'));
    s.apply(raise('8'));
    expect(s.receipt(T, 'steward-8')?.outcome).toBe('DUPLICATE');
    expect(s.finding(T, 'f1')).toMatchObject({ raised: 1, resolvedAt: null });
    s.apply(resolve('7'));
    s.apply(resolve('6'));
    expect(s.receipt(T, 'steward-6')?.outcome).toBe('DUPLICATE');
    expect(s.finding(T, 'f1')).toMatchObject({ resolvedAt: daysAgo(7), resolveReason: 'gone' });
    s.apply(raise('5'));
    expect(s.finding(T, 'f1')).toMatchObject({ raised: 2, resolvedAt: null, raisedAt: daysAgo(5) });
  });

  it('a dismissed finding is not reopened by a later raise (a duplicate, the dismissal kept)', () => {
    const s = new MemoryState();
    s.apply(raise('9'));
    s.apply(resolve('8', true));
    expect(s.finding(T, 'f1')).toMatchObject({ dismissed: true, resolvedAt: daysAgo(8) });
    s.apply(raise('7'));
    expect(s.receipt(T, 'steward-7')?.outcome).toBe('DUPLICATE');
    expect(s.finding(T, 'f1')).toMatchObject({ dismissed: true, raised: 1, resolvedAt: daysAgo(8) });
  });
});

describe('owners and stewards from grants', () => {
  const g = (
    id: string,
    grantee: string,
    namespace: string,
    role?: GrantState['role'],
    revoked = false,
  ): GrantState => ({
    tenant: T,
    id,
    grantee,
    namespace,
    maxSensitivity: 'INTERNAL',
    purposes: null,
    grantedBy: 'i|admin',
    grantedAt: daysAgo(3),
    revokedAt: revoked ? daysAgo(1) : null,
    revokeReason: null,
    ...(role ? { role } : {}),
  });

  it('live OWNER and STEWARD grants on the namespace or an ancestor, nearest first; readers and revoked ones are neither', () => {
    const s = stewardshipOf(
      [
        g('1', 'i|olga', 'acme', 'OWNER'),
        g('2', 'i|sam', 'acme/platform', 'STEWARD'),
        g('3', 'i|rex', 'acme/platform'),
        g('4', 'i|ola', 'acme/platform', 'OWNER', true),
        g('5', 'i|sid', 'acme/other', 'STEWARD'),
        g('6', 'i|deep', 'acme/platform/db', 'OWNER'),
      ],
      'acme/platform',
    );
    expect(s.owners.map((o) => o.principal)).toEqual(['i|olga']);
    expect(s.stewards.map((o) => [o.principal, o.role, o.namespace])).toEqual([
      ['i|sam', 'STEWARD', 'acme/platform'],
      ['i|olga', 'OWNER', 'acme'],
    ]);
  });
});

describe('scorecard', () => {
  const row = (o: Partial<ScoreRow>): ScoreRow => ({
    status: 'ACTIVE',
    validTo: null,
    reviewBy: null,
    createdAt: daysAgo(10),
    approvedAt: null,
    linked: true,
    utility: 0,
    votes: 0,
    ...o,
  });

  it('coverage, freshness, contest rate, review latency (median) and utility (mean of rated) over live records', () => {
    const card = scorecardOf(
      [
        row({}),
        row({ linked: false, validTo: daysAgo(1) }),
        row({ status: 'CONTESTED', reviewBy: daysAgo(1), utility: 0.5, votes: 2 }),
        row({ status: 'CONTESTED', utility: -0.25, votes: 1, approvedAt: daysAgo(9) }),
        row({ status: 'CANDIDATE', linked: false }),
        row({ status: 'RETRACTED', approvedAt: daysAgo(7), createdAt: daysAgo(10) }),
        row({ status: 'ACTIVE', approvedAt: daysAgo(5), createdAt: daysAgo(10) }),
      ],
      NOW,
    );
    expect(card).toEqual({
      records: 7,
      live: 5,
      candidates: 1,
      coverage: 0.8,
      freshness: 0.6,
      contestRate: 0.4,
      reviewLatencyMs: 3 * 86_400_000,
      reviewed: 3,
      utility: 0.125,
      withFeedback: 2,
    });
  });

  it('an empty namespace has no shares, no latency and no utility', () => {
    expect(scorecardOf([], NOW)).toMatchObject({
      records: 0,
      coverage: null,
      freshness: null,
      contestRate: null,
      reviewLatencyMs: null,
      utility: null,
    });
  });

  it('median of odd and even counts; reviewBy only when it is a date', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(median([])).toBeNull();
    expect(reviewByOf({ 'muninn:reviewBy': '2026-01-01' })).toBe('2026-01-01T00:00:00.000Z');
    expect(reviewByOf({ 'muninn:reviewBy': 'soon' })).toBeNull();
    expect(reviewByOf({})).toBeNull();
  });
});
