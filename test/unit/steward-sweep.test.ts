import type { FindingState } from '../../src/domain/fold.ts';
import { describe, expect, it } from 'vitest';
import type { DuplicateRow } from '../../src/domain/stewardship.ts';
import type { EventOf, LedgerEvent } from '../../src/domain/events.ts';
import { StewardScheduler } from '../../src/lifecycle/steward.ts';
import { silentLogger } from '../../src/ports/logger.ts';
import type { StewardLookups } from '../../src/ports/steward.ts';

/*
 * The steward's near-duplicate check is bounded: a full sweep on the first run and every 24th, in between
 * only records changed since the previous run (less a margin) plus a pair-by-pair check of the open ones.
 * A fake graph answers the lookups; the findings it raises go through the real fold rules (planFindings).
 */

const T = 'acme';
const pair = (a: string, b: string): DuplicateRow => ({ a, b, namespace: 'acme/x', cosine: 0.99 });

function harness() {
  const calls: string[] = [];
  let findings: FindingState[] = [];
  let holding = new Set(['r1|r2']);
  const lookups: StewardLookups = {
    tenants: () => Promise.resolve([T]),
    staleRows: () => Promise.resolve([]),
    contestedRows: () => Promise.resolve([]),
    orphanRows: () => Promise.resolve([]),
    candidateRows: () => Promise.resolve([]),
    utilityRows: () => Promise.resolve([]),
    duplicateRows: () => {
      calls.push('full');
      return Promise.resolve([...holding].map((k) => pair(k.split('|')[0]!, k.split('|')[1]!)));
    },
    duplicateRowsSince: (_t, _c, since) => {
      calls.push(`since ${since}`);
      return Promise.resolve([]);
    },
    duplicatePairs: (_t, _c, pairs) => {
      calls.push(`pairs ${pairs.map((p) => p.join('|')).join(',')}`);
      return Promise.resolve(pairs.filter((p) => holding.has(p.join('|'))).map((p) => pair(p[0], p[1])));
    },
    findings: () => Promise.resolve(findings),
  };
  // The ledger "projects" at once: raised findings open, resolved ones close.
  const append = (events: readonly LedgerEvent[]) => {
    for (const e of events) {
      if (e.type === 'FindingRaised') {
        const p = (e as EventOf<'FindingRaised'>).payload;
        findings = [
          ...findings.filter((f) => f.id !== p.findingId),
          {
            tenant: T,
            id: p.findingId,
            type: p.findingType,
            severity: p.severity,
            namespace: e.namespace,
            recordIds: p.recordIds,
            entityIds: p.entityIds,
            reason: p.reason,
            raisedAt: e.recordedAt,
            raised: 1,
            resolvedAt: null,
            resolvedBy: null,
            resolveReason: null,
            dismissed: false,
          },
        ];
      } else if (e.type === 'FindingResolved') {
        const id = (e as EventOf<'FindingResolved'>).payload.findingId;
        findings = findings.map((f) => (f.id === id ? { ...f, resolvedAt: e.recordedAt } : f));
      }
    }
    return Promise.resolve(events.map((_, i) => ({ partition: 0, offset: String(i) })));
  };
  let clock = Date.parse('2026-12-01T00:00:00.000Z');
  let n = 0;
  const steward = new StewardScheduler({
    lookups,
    ledger: { append },
    projection: { waitFor: () => Promise.resolve(true) },
    thresholds: {
      contestedDays: 14,
      candidateDays: 7,
      duplicateCosine: 0.97,
      lowUtility: 0.2,
      lowUtilityMinVotes: 3,
    },
    tenants: [T],
    clock: { now: () => new Date(clock) },
    ageClock: { now: () => new Date(clock) },
    ids: { uuid: () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}` },
    awaitTimeoutMs: 1000,
    intervalMs: 3_600_000,
    logger: silentLogger,
  });
  return {
    steward,
    calls,
    open: () => findings.filter((f) => f.resolvedAt === null),
    tick: (ms: number) => (clock += ms),
    stopHolding: () => (holding = new Set()),
  };
}

describe('the steward near-duplicate sweep', () => {
  it('sweeps fully on the first run, then reads only changes since the previous run less 15 minutes', async () => {
    const h = harness();
    await h.steward.runOnce();
    expect(h.calls).toEqual(['full']);
    expect(h.open().map((f) => [f.type, f.recordIds])).toEqual([['NEAR_DUPLICATE', ['r1', 'r2']]]);
    h.tick(3_600_000);
    const r = await h.steward.runOnce();
    expect(h.calls.slice(1)).toEqual(['since 2026-11-30T23:45:00.000Z', 'pairs r1|r2']);
    // The open pair still holds: nothing raised, nothing resolved.
    expect([r.raised, r.resolved]).toEqual([0, 0]);
  });

  it('an open pair that no longer holds is resolved by an incremental run', async () => {
    const h = harness();
    await h.steward.runOnce();
    h.stopHolding();
    const r = await h.steward.runOnce();
    expect(r.resolved).toBe(1);
    expect(h.open()).toEqual([]);
  });

  it('sweeps fully again after 24 runs', async () => {
    const h = harness();
    for (let i = 0; i < 25; i++) await h.steward.runOnce();
    expect(h.calls.filter((c) => c === 'full')).toHaveLength(2);
    expect(
      h.calls.filter((c) => c === 'full').length + h.calls.filter((c) => c.startsWith('since')).length,
    ).toBe(25);
  });
});
