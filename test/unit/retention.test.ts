import { describe, expect, it } from 'vitest';
import { LedgerEvent } from '../../src/domain/events.ts';
import { currentRevision } from '../../src/domain/fold.ts';
import { MemoryState } from '../../src/domain/memory-state.ts';
import {
  due,
  RetentionRules,
  ruleFor,
  type HoldScope,
  type RetentionCandidate,
  type RetentionRule,
} from '../../src/domain/retention.ts';

/*
 * Retention's decision, pure: which records are due to be archived or erased, given the rules, the
 * standing holds and a fixed "now" (the fake clock), and the fold of the archive event it appends.
 */

const NOW = new Date('2026-06-01T00:00:00.000Z');
const daysAgo = (d: number) => new Date(NOW.getTime() - d * 86_400_000).toISOString();

const rules: RetentionRule[] = RetentionRules.parse([
  { tenant: 'acme', namespace: 'acme/chat', archiveAfterDays: 30, eraseAfterDays: 365 },
  { tenant: 'acme', namespace: 'acme/chat', class: 'PREFERENCE', eraseAfterDays: 90 },
  { tenant: 'acme', namespace: 'acme/chat/legal', archiveAfterDays: 10 },
]);

let n = 0;
function rec(o: Partial<RetentionCandidate> & { age: number }): RetentionCandidate {
  return {
    tenant: 'acme',
    id: `r${++n}`,
    namespace: 'acme/chat',
    class: 'FACT',
    status: 'ACTIVE',
    createdAt: daysAgo(o.age),
    ...o,
  };
}
const noHolds = () => [];
const actions = (cs: RetentionCandidate[], holds: (t: string) => readonly HoldScope[] = noHolds) => {
  const plan = due(rules, cs, holds, NOW);
  return {
    due: plan.due.map((d) => `${d.recordId}:${d.action}`),
    held: plan.held.map((d) => `${d.recordId}:${d.action}:${d.holds.join(',')}`),
  };
};

describe('retention rules as data', () => {
  it('refuses a rule that does nothing, or erases before it archives', () => {
    const base = { tenant: 'acme', namespace: 'acme/x' };
    expect(RetentionRules.safeParse([base]).success).toBe(false);
    expect(RetentionRules.safeParse([{ ...base, archiveAfterDays: 30, eraseAfterDays: 10 }]).success).toBe(
      false,
    );
    expect(RetentionRules.safeParse([{ ...base, class: 'NOPE', eraseAfterDays: 1 }]).success).toBe(false);
    expect(RetentionRules.safeParse([{ ...base, eraseAfterDays: 1 }]).success).toBe(true);
  });

  it('the deepest namespace governs, and a class rule wins over a class-less one there', () => {
    expect(ruleFor(rules, rec({ age: 0 }))?.eraseAfterDays).toBe(365);
    expect(ruleFor(rules, rec({ age: 0, class: 'PREFERENCE' }))?.eraseAfterDays).toBe(90);
    expect(ruleFor(rules, rec({ age: 0, namespace: 'acme/chat/legal/x' }))?.archiveAfterDays).toBe(10);
    expect(ruleFor(rules, rec({ age: 0, namespace: 'acme/chatter' }))).toBeUndefined();
    expect(ruleFor(rules, rec({ age: 0, tenant: 'other' }))).toBeUndefined();
  });
});

describe('what is due', () => {
  it('nothing before its time; archive after N days; erase after M days (erase wins)', () => {
    const young = rec({ age: 29 });
    const old = rec({ age: 30 });
    const ancient = rec({ age: 365 });
    expect(actions([young, old, ancient]).due).toEqual([`${old.id}:ARCHIVE`, `${ancient.id}:ERASE`]);
  });

  it('archives only live knowledge; what is archived, retracted or pending is left until it is erased', () => {
    const cs = (['ACTIVE', 'CONTESTED', 'SUPERSEDED', 'ARCHIVED', 'RETRACTED', 'CANDIDATE'] as const).map(
      (status) => rec({ age: 40, status }),
    );
    expect(actions(cs).due).toEqual(cs.slice(0, 3).map((c) => `${c.id}:ARCHIVE`));
    const erasable = cs.map((c) => ({ ...c, createdAt: daysAgo(400) }));
    expect(actions(erasable).due).toEqual(erasable.map((c) => `${c.id}:ERASE`));
  });

  it('an erased record is done, unless its erasure was cut short (its key still alive): then it is finished', () => {
    const done = rec({ age: 400, status: 'ERASED' });
    const cut = rec({ age: 400, status: 'ERASED', keyActive: true });
    expect(actions([done, cut]).due).toEqual([`${cut.id}:ERASE`]);
  });

  it('a standing hold on the record or on a namespace above it keeps the record; others go ahead', () => {
    const a = rec({ age: 400 });
    const b = rec({ age: 400, namespace: 'acme/chat/legal/case-7' });
    const c = rec({ age: 40 });
    const d = rec({ age: 400, namespace: 'acme/chat/legal-ish' });
    const holds: HoldScope[] = [
      { id: 'h-rec', target: 'RECORD', namespace: 'acme/chat', recordId: a.id },
      { id: 'h-ns', target: 'NAMESPACE', namespace: 'acme/chat/legal', recordId: null },
    ];
    const out = actions([a, b, c, d], (t) => (t === 'acme' ? holds : []));
    expect(out.due).toEqual([`${c.id}:ARCHIVE`, `${d.id}:ERASE`]);
    expect(out.held).toEqual([`${a.id}:ERASE:h-rec`, `${b.id}:ARCHIVE:h-ns`]);
    // Released: the same records are due again, with nothing held.
    expect(actions([a, b, c, d]).due).toEqual([
      `${a.id}:ERASE`,
      `${b.id}:ARCHIVE`,
      `${c.id}:ARCHIVE`,
      `${d.id}:ERASE`,
    ]);
  });

  it('is the same decision when asked again (idempotent): it reads only its inputs', () => {
    const cs = [rec({ age: 31 }), rec({ age: 366 })];
    expect(due(rules, cs, noHolds, NOW)).toEqual(due(rules, cs, noHolds, NOW));
  });
});

describe('the RecordArchived fold', () => {
  const env = (type: string, key: string, payload: unknown) =>
    LedgerEvent.parse({
      eventId: crypto.randomUUID(),
      type,
      schemaVersion: 1,
      tenant: 'acme',
      namespace: 'acme/chat',
      idempotencyKey: key,
      commandHash: 'a'.repeat(64),
      principal: { iss: 'muninn', sub: 'retention' },
      actors: [],
      purpose: 'retention',
      changesetId: null,
      recordedAt: NOW.toISOString(),
      payload,
    });
  const proposed = env('RecordProposed', 'p1', {
    recordId: 'rec-1',
    class: 'FACT',
    statement: { subject: 's', predicate: 'p', object: 'o', text: 's p o' },
    about: [],
    sensitivity: 'INTERNAL',
    confidence: 0.8,
    validFrom: '2025-01-01T00:00:00.000Z',
    validTo: null,
    timeSource: 'STATED',
    status: 'ACTIVE',
    rationale: null,
    sources: [],
    ext: {},
    relation: null,
    embedding: null,
  });
  const archive = (key: string, expectedVersion: number) =>
    env('RecordArchived', key, { recordId: 'rec-1', expectedVersion, reason: 'retention acme:acme/chat' });

  it('appends an ARCHIVED revision with the rule as its reason; a repeat is nothing, a stale version a CONFLICT', () => {
    const s = new MemoryState();
    s.apply(proposed);
    s.apply(archive('a1', 1));
    const r = s.record('acme', 'rec-1')!;
    expect(currentRevision(r)).toMatchObject({
      version: 2,
      status: 'ARCHIVED',
      reason: 'retention acme:acme/chat',
    });
    expect(s.receipt('acme', 'a1')).toMatchObject({ outcome: 'ARCHIVED', version: 2 });
    s.apply(archive('a1', 1));
    expect(s.record('acme', 'rec-1')!.revisions).toHaveLength(2);
    s.apply(archive('a2', 1));
    expect(s.receipt('acme', 'a2')).toMatchObject({ outcome: 'CONFLICT' });
    s.apply(archive('a3', 2));
    expect(s.receipt('acme', 'a3')).toMatchObject({ outcome: 'REJECTED', reason: 'record is ARCHIVED' });
  });
});
