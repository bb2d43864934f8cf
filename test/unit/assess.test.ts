import { describe, expect, it } from 'vitest';
import { Sensitivities, type Sensitivity } from '../../src/domain/model.ts';
import type { Principal, Scope } from '../../src/domain/principal.ts';
import { highWaterMark, scoreConfidence, sourceTrust, type SourceTrust } from '../../src/ingest/assess.ts';

/** Label (high-water mark), source trust and the confidence score: all pure. */

const principal = (o: { scopes?: Scope[]; agent?: boolean } = {}): Principal => ({
  iss: 'https://issuer.test',
  sub: 'alice',
  tenant: 'acme',
  scopes: new Set(o.scopes ?? ['read', 'write']),
  actors: o.agent ? [{ iss: 'https://issuer.test', sub: 'agent:coder' }] : [],
  tokenId: undefined,
  expiresAt: undefined,
});

const rank = (s: Sensitivity): number => Sensitivities.indexOf(s);

describe('highWaterMark', () => {
  it('of no labels → PUBLIC', () => {
    expect(highWaterMark([])).toBe('PUBLIC');
  });

  it('of one label → that label, for each label', () => {
    for (const s of Sensitivities) expect(highWaterMark([s])).toBe(s);
  });

  it('is the highest label, in whatever order the labels come', () => {
    const labels: Sensitivity[] = ['INTERNAL', 'PUBLIC', 'RESTRICTED', 'CONFIDENTIAL', 'INTERNAL'];
    const orders = [labels, [...labels].reverse(), [...labels].sort(), [...labels].sort().reverse()];
    for (const o of orders) expect(highWaterMark(o)).toBe('RESTRICTED');
    expect(highWaterMark(['CONFIDENTIAL', 'PUBLIC'])).toBe('CONFIDENTIAL');
    expect(highWaterMark(['PUBLIC', 'CONFIDENTIAL'])).toBe('CONFIDENTIAL');
  });

  it('never lowers: adding any label to a set never gives a lower mark than before', () => {
    // Given every pair (base set, extra label) over all labels
    for (const a of Sensitivities) {
      for (const b of Sensitivities) {
        for (const extra of Sensitivities) {
          const before = highWaterMark([a, b]);
          // When one more label is cited
          const after = highWaterMark([a, b, extra]);
          // Then the mark is at least what it was, and at least the new label
          expect(rank(after)).toBeGreaterThanOrEqual(rank(before));
          expect(rank(after)).toBeGreaterThanOrEqual(rank(extra));
        }
      }
    }
  });
});

describe('sourceTrust', () => {
  it('a person writing directly (no act chain) → human', () => {
    expect(sourceTrust(principal(), null, false)).toBe('human');
  });

  it('a person writing directly who sets the verified flag → still human', () => {
    expect(sourceTrust(principal(), null, true)).toBe('human');
  });

  it('an agent acting for a person (act chain) → agent-inferred', () => {
    expect(sourceTrust(principal({ agent: true }), null, false)).toBe('agent-inferred');
    expect(sourceTrust(principal({ agent: true }), 'transcript', false)).toBe('agent-inferred');
  });

  it('an agent with the verified flag → agent-verified', () => {
    expect(sourceTrust(principal({ agent: true }), null, true)).toBe('agent-verified');
  });

  it('an import:* source written by an admin → authoritative', () => {
    expect(sourceTrust(principal({ scopes: ['admin'] }), 'import:jira', false)).toBe('authoritative');
  });

  it('an import:* source written by a non-admin person → human', () => {
    expect(sourceTrust(principal({ scopes: ['read', 'write', 'review'] }), 'import:jira', false)).toBe(
      'human',
    );
  });

  it('a non-import source written by an admin → human (admin alone is not authority)', () => {
    expect(sourceTrust(principal({ scopes: ['admin'] }), 'signal', false)).toBe('human');
    expect(sourceTrust(principal({ scopes: ['admin'] }), null, false)).toBe('human');
  });

  it('a source that only contains "import:" later on ("x-import:jira") by an admin → human', () => {
    expect(sourceTrust(principal({ scopes: ['admin'] }), 'x-import:jira', false)).toBe('human');
  });
});

describe('scoreConfidence', () => {
  const ORDER: SourceTrust[] = ['authoritative', 'human', 'agent-verified', 'agent-inferred'];
  const steps = Array.from({ length: 21 }, (_, i) => i / 20);

  it('for equal extraction confidence: authoritative > human > agent-verified > agent-inferred', () => {
    for (const x of [0, 0.3, 0.5, 0.8, 1]) {
      const scores = ORDER.map((t) => scoreConfidence(t, x, 0));
      for (let i = 1; i < scores.length; i++) {
        expect(scores[i - 1], `${ORDER[i - 1]} vs ${ORDER[i]} at extraction ${x}`).toBeGreaterThan(
          scores[i]!,
        );
      }
    }
  });

  it('is non-decreasing in extraction confidence, and strictly increasing while below the cap', () => {
    for (const t of ORDER) {
      const scores = steps.map((x) => scoreConfidence(t, x, 0));
      for (let i = 1; i < scores.length; i++) {
        expect(scores[i]!, `${t} at ${steps[i]}`).toBeGreaterThanOrEqual(scores[i - 1]!);
        if (scores[i]! < 0.99) expect(scores[i]!, `${t} at ${steps[i]}`).toBeGreaterThan(scores[i - 1]!);
      }
    }
  });

  it('is non-decreasing in corroborations, and strictly increasing for the first ones below the cap', () => {
    for (const t of ORDER) {
      const scores = [0, 1, 2, 3, 4, 5, 10].map((c) => scoreConfidence(t, 0.5, c));
      for (let i = 1; i < scores.length; i++) expect(scores[i]!).toBeGreaterThanOrEqual(scores[i - 1]!);
      expect(scoreConfidence(t, 0.5, 1)).toBeGreaterThan(scoreConfidence(t, 0.5, 0));
    }
  });

  it('is capped at 0.99 (authoritative, extraction 1, many corroborations → exactly 0.99)', () => {
    expect(scoreConfidence('authoritative', 1, 0)).toBeLessThanOrEqual(0.99);
    expect(scoreConfidence('authoritative', 1, 100)).toBe(0.99);
    for (const t of ORDER)
      for (const x of steps) expect(scoreConfidence(t, x, 1000)).toBeLessThanOrEqual(0.99);
  });

  it('the corroboration bonus is capped: 3 and 50 corroborations score the same (below the 0.99 cap)', () => {
    const three = scoreConfidence('agent-inferred', 0.2, 3);
    expect(three).toBeLessThan(0.99);
    expect(scoreConfidence('agent-inferred', 0.2, 50)).toBe(three);
    // and the cap is reached: 2 corroborations are still below 3
    expect(scoreConfidence('agent-inferred', 0.2, 2)).toBeLessThan(three);
  });

  it('extraction confidence outside [0, 1] and negative corroborations are clamped', () => {
    expect(scoreConfidence('human', 7, 0)).toBe(scoreConfidence('human', 1, 0));
    expect(scoreConfidence('human', -3, 0)).toBe(scoreConfidence('human', 0, 0));
    expect(scoreConfidence('human', 0.5, -4)).toBe(scoreConfidence('human', 0.5, 0));
  });

  it('stays within (0, 0.99] for every trust level and extraction confidence', () => {
    for (const t of ORDER) {
      for (const x of steps) {
        const s = scoreConfidence(t, x, 0);
        expect(s).toBeGreaterThan(0);
        expect(s).toBeLessThanOrEqual(0.99);
      }
    }
  });
});
