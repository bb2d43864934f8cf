import { describe, expect, it } from 'vitest';
import {
  AdmissionPolicy,
  admit,
  defaultAdmissionPolicy,
  namespaceMatches,
  type AdmissionInput,
} from '../../src/domain/admission.ts';
import { RecordClasses } from '../../src/domain/model.ts';

/** The admission policy: namespace globs, the default policy's decisions, custom policies, validation. */

const input = (o: Partial<AdmissionInput> = {}): AdmissionInput => ({
  namespace: 'acme/platform',
  class: 'FACT',
  sensitivity: 'INTERNAL',
  confidence: 0.8,
  flags: [],
  writerIsAgent: false,
  ...o,
});

describe('namespaceMatches', () => {
  it('`**` matches every namespace', () => {
    for (const ns of ['a', 'a/b', 'acme/platform/payments-api/agent:reviewer'])
      expect(namespaceMatches('**', ns)).toBe(true);
  });

  it('`a/**` matches a itself and its whole subtree', () => {
    expect(namespaceMatches('a/**', 'a')).toBe(true);
    expect(namespaceMatches('a/**', 'a/b')).toBe(true);
    expect(namespaceMatches('a/**', 'a/b/c/d')).toBe(true);
  });

  it('`a/**` does not match a sibling sharing the prefix (`ab`, `ab/c`) or another root', () => {
    expect(namespaceMatches('a/**', 'ab')).toBe(false);
    expect(namespaceMatches('a/**', 'ab/c')).toBe(false);
    expect(namespaceMatches('a/**', 'b/a')).toBe(false);
  });

  it('`a/*` matches direct children only: not a itself, not grandchildren, not `ab/c`', () => {
    expect(namespaceMatches('a/*', 'a/b')).toBe(true);
    expect(namespaceMatches('a/*', 'a/zz')).toBe(true);
    expect(namespaceMatches('a/*', 'a')).toBe(false);
    expect(namespaceMatches('a/*', 'a/b/c')).toBe(false);
    expect(namespaceMatches('a/*', 'ab/c')).toBe(false);
  });

  it('a glob without wildcards matches exactly that namespace', () => {
    expect(namespaceMatches('a/b', 'a/b')).toBe(true);
    expect(namespaceMatches('a/b', 'a')).toBe(false);
    expect(namespaceMatches('a/b', 'a/b/c')).toBe(false);
    expect(namespaceMatches('a/b', 'a/bc')).toBe(false);
  });
});

describe('admit with the default policy', () => {
  const p = defaultAdmissionPolicy;

  it('a FACT by a human → ACTIVE with no reasons', () => {
    expect(admit(p, input())).toEqual({ status: 'ACTIVE', reasons: [] });
  });

  it('a FACT by an agent → ACTIVE (the default policy admits any writer)', () => {
    expect(admit(p, input({ writerIsAgent: true })).status).toBe('ACTIVE');
  });

  it('every class except NORMATIVE by a human → ACTIVE', () => {
    for (const c of RecordClasses.filter((x) => x !== 'NORMATIVE'))
      expect(admit(p, input({ class: c })).status, c).toBe('ACTIVE');
  });

  it('a NORMATIVE record → CANDIDATE with a review:class reason', () => {
    const r = admit(p, input({ class: 'NORMATIVE' }));
    expect(r.status).toBe('CANDIDATE');
    expect(r.reasons.some((x) => x.startsWith('review:class'))).toBe(true);
  });

  it('an injection flag → CANDIDATE with a review:injection… reason', () => {
    const r = admit(p, input({ flags: ['injection:override_instruction'] }));
    expect(r.status).toBe('CANDIDATE');
    expect(r.reasons.some((x) => x.startsWith('review:injection:override_instruction'))).toBe(true);
  });

  it('a non-review flag (pii:email) alone → ACTIVE', () => {
    expect(admit(p, input({ flags: ['pii:email'] }))).toEqual({ status: 'ACTIVE', reasons: [] });
  });

  it('RESTRICTED → CANDIDATE with a review:sensitivity reason; CONFIDENTIAL → ACTIVE', () => {
    const r = admit(p, input({ sensitivity: 'RESTRICTED' }));
    expect(r.status).toBe('CANDIDATE');
    expect(r.reasons.some((x) => x.startsWith('review:sensitivity'))).toBe(true);
    expect(admit(p, input({ sensitivity: 'CONFIDENTIAL' })).status).toBe('ACTIVE');
  });

  it('confidence below minConfidence (0.2) → CANDIDATE with a review:confidence reason; exactly 0.2 → ACTIVE', () => {
    const r = admit(p, input({ confidence: 0.19 }));
    expect(r.status).toBe('CANDIDATE');
    expect(r.reasons.some((x) => x.startsWith('review:confidence'))).toBe(true);
    expect(admit(p, input({ confidence: 0.2 })).status).toBe('ACTIVE');
  });

  it('a NORMATIVE record with an injection flag → CANDIDATE with both reasons', () => {
    const r = admit(p, input({ class: 'NORMATIVE', flags: ['injection:role_play'] }));
    expect(r.status).toBe('CANDIDATE');
    expect(r.reasons.some((x) => x.startsWith('review:class'))).toBe(true);
    expect(r.reasons.some((x) => x.startsWith('review:injection:role_play'))).toBe(true);
  });
});

describe('admit with a custom policy', () => {
  // Agents may auto-admit only OBSERVATIONs in team/**; people may auto-admit anything but NORMATIVE anywhere.
  const policy = AdmissionPolicy.parse({
    autoAdmit: [
      { namespaces: ['team/**'], classes: ['OBSERVATION'], writers: 'agents' },
      { namespaces: ['**'], classes: RecordClasses.filter((c) => c !== 'NORMATIVE'), writers: 'humans' },
    ],
  });

  it("an agent's FACT in team/x → CANDIDATE with a review:scope reason", () => {
    const r = admit(policy, input({ namespace: 'team/x', writerIsAgent: true }));
    expect(r.status).toBe('CANDIDATE');
    expect(r.reasons).toHaveLength(1);
    expect(r.reasons[0]).toMatch(/^review:scope/);
  });

  it("a human's FACT in team/x → ACTIVE", () => {
    expect(admit(policy, input({ namespace: 'team/x', writerIsAgent: false }))).toEqual({
      status: 'ACTIVE',
      reasons: [],
    });
  });

  it("an agent's OBSERVATION in team/x → ACTIVE; in other/x → CANDIDATE review:scope", () => {
    expect(
      admit(policy, input({ namespace: 'team/x', class: 'OBSERVATION', writerIsAgent: true })).status,
    ).toBe('ACTIVE');
    const r = admit(policy, input({ namespace: 'other/x', class: 'OBSERVATION', writerIsAgent: true }));
    expect(r.status).toBe('CANDIDATE');
    expect(r.reasons[0]).toMatch(/^review:scope/);
  });

  it('a proposal that no single rule admits (one rule allows its label, another its confidence) → CANDIDATE', () => {
    // Given two rules for the same writers and class: A admits RESTRICTED but only at confidence ≥ 0.9,
    // B admits any confidence but only PUBLIC.
    const split = AdmissionPolicy.parse({
      autoAdmit: [
        { namespaces: ['**'], classes: ['FACT'], maxSensitivity: 'RESTRICTED', minConfidence: 0.9 },
        { namespaces: ['**'], classes: ['FACT'], maxSensitivity: 'PUBLIC', minConfidence: 0 },
      ],
    });
    // When a RESTRICTED FACT with confidence 0.3 arrives (A refuses its confidence, B its label)
    const r = admit(split, input({ sensitivity: 'RESTRICTED', confidence: 0.3 }));
    // Then it waits for a reviewer
    expect(r.status).toBe('CANDIDATE');
  });
});

describe('AdmissionPolicy parsing', () => {
  it('AdmissionPolicy.parse({}) equals defaultAdmissionPolicy, with the documented defaults', () => {
    const parsed = AdmissionPolicy.parse({});
    expect(parsed).toEqual(defaultAdmissionPolicy);
    expect(parsed.review).toEqual({ classes: ['NORMATIVE'], flags: ['injection:'] });
    expect(parsed.autoAdmit).toHaveLength(1);
    expect(parsed.autoAdmit[0]).toMatchObject({
      namespaces: ['**'],
      writers: 'any',
      maxSensitivity: 'CONFIDENTIAL',
      minConfidence: 0.2,
    });
    expect(parsed.autoAdmit[0]!.classes).not.toContain('NORMATIVE');
    expect(parsed.budgets).toEqual({
      perWriterPerNamespace: { perMinute: 600, burst: 200 },
      perNamespace: { perMinute: 6000, burst: 2000 },
    });
  });

  it('an unknown class in an auto-admit rule is rejected by safeParse', () => {
    const r = AdmissionPolicy.safeParse({ autoAdmit: [{ namespaces: ['**'], classes: ['RUMOUR'] }] });
    expect(r.success).toBe(false);
  });

  it('an unknown class in review.classes is rejected by safeParse', () => {
    expect(AdmissionPolicy.safeParse({ review: { classes: ['GOSSIP'] } }).success).toBe(false);
  });

  it('a negative perMinute is rejected by safeParse', () => {
    const r = AdmissionPolicy.safeParse({
      budgets: { perWriterPerNamespace: { perMinute: -1, burst: 10 } },
    });
    expect(r.success).toBe(false);
    expect(
      AdmissionPolicy.safeParse({ budgets: { perNamespace: { perMinute: -5, burst: 10 } } }).success,
    ).toBe(false);
  });

  it('a zero or fractional burst, an unknown writers value and minConfidence > 1 are rejected by safeParse', () => {
    expect(
      AdmissionPolicy.safeParse({ budgets: { perNamespace: { perMinute: 10, burst: 0 } } }).success,
    ).toBe(false);
    expect(
      AdmissionPolicy.safeParse({ budgets: { perNamespace: { perMinute: 10, burst: 2.5 } } }).success,
    ).toBe(false);
    expect(AdmissionPolicy.safeParse({ autoAdmit: [{ writers: 'robots' }] }).success).toBe(false);
    expect(AdmissionPolicy.safeParse({ autoAdmit: [{ minConfidence: 1.5 }] }).success).toBe(false);
  });

  it('a well-formed custom policy document is accepted by safeParse (control)', () => {
    const r = AdmissionPolicy.safeParse({
      autoAdmit: [{ namespaces: ['team/**'], classes: ['OBSERVATION'], writers: 'agents' }],
      budgets: { perWriterPerNamespace: { perMinute: 60, burst: 10 } },
    });
    expect(r.success).toBe(true);
  });
});
