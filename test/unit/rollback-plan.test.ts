import { describe, expect, it } from 'vitest';
import type { RecordState, RevisionState } from '../../src/domain/fold.ts';
import { currentRevision as currentRevisionOf } from '../../src/domain/revisions.ts';
import { MemoryState } from '../../src/domain/memory-state.ts';
import type { Principal } from '../../src/domain/principal.ts';
import { decideApprove, decideRetract } from '../../src/domain/commands.ts';
import { decideRollback } from '../../src/domain/rollback-command.ts';
import { planCompensations, planTaints } from '../../src/domain/rollback-plan.ts';

/* The rollback planner and the fold of its event, pure: no graph, no ledger. */

const statement = (text: string) => ({ subject: 's', predicate: 'is', object: text, text });

function rev(version: number, o: Partial<RevisionState> & { eventId: string }): RevisionState {
  return {
    version,
    statement: statement(`text v${version}`),
    status: 'ACTIVE',
    validFrom: '2026-01-01T00:00:00.000Z',
    validTo: null,
    recordedAt: `2026-01-0${version}T00:00:00.000Z`,
    retiredAt: null,
    changesetId: null,
    reason: null,
    by: 'iss|alice',
    cause: version === 1 ? 'RecordProposed' : 'RecordRevised',
    ...o,
  };
}

function rec(id: string, revisions: RevisionState[], o: Partial<RecordState> = {}): RecordState {
  const closed = revisions.map((v, i) =>
    i < revisions.length - 1 ? { ...v, retiredAt: revisions[i + 1]!.recordedAt } : v,
  );
  return {
    tenant: 'acme',
    id,
    namespace: 'acme/x',
    class: 'FACT',
    sensitivity: 'INTERNAL',
    confidence: 0.5,
    timeSource: 'STATED',
    rationale: null,
    about: [],
    sources: [],
    ext: {},
    createdAt: revisions[0]!.recordedAt,
    proposedBy: 'iss|alice',
    proposedVia: [],
    approvals: [],
    approvedAt: null,
    revisions: closed,
    relations: [],
    reviewReasons: [],
    flags: [],
    embedding: null,
    episodeId: null,
    reinforcements: 0,
    feedback: { used: 0, ignored: 0, wrong: 0 },
    votes: {},
    ...o,
  };
}

describe('planCompensations', () => {
  it('a record created by a reverted event → REVERT (status REVERTED, its text kept for the record)', () => {
    const [c] = planCompensations([rec('a', [rev(1, { eventId: 'e1' })])], new Set(['e1']), 'poison');
    expect(c).toMatchObject({ recordId: 'a', expectedVersion: 1, action: 'REVERT' });
    expect(c!.target).toMatchObject({ status: 'REVERTED', statement: statement('text v1') });
  });

  it('a revision by a reverted event → RESTORE the revision before it', () => {
    const r = rec('a', [
      rev(1, { eventId: 'e0' }),
      rev(2, { eventId: 'e1', validTo: '2026-06-01T00:00:00.000Z' }),
    ]);
    const [c] = planCompensations([r], new Set(['e1']), 'why');
    expect(c).toMatchObject({ action: 'RESTORE', expectedVersion: 2 });
    expect(c!.target).toMatchObject({ statement: statement('text v1'), status: 'ACTIVE', validTo: null });
  });

  it('a later revise by someone else → REVIEW with the reason, never overwritten', () => {
    const r = rec('a', [
      rev(1, { eventId: 'e1' }),
      rev(2, { eventId: 'e2', by: 'iss|bob', cause: 'RecordRevised' }),
    ]);
    const [c] = planCompensations([r], new Set(['e1']), 'why');
    expect(c).toMatchObject({ action: 'REVIEW', target: null });
    expect(c!.reason).toContain('iss|bob');
  });

  it("the reverting principal's own later revise, or a system mark by another event, is reverted with it", () => {
    const own = rec('a', [rev(1, { eventId: 'e1' }), rev(2, { eventId: 'e2', by: 'iss|alice' })]);
    const mark = rec('b', [
      rev(1, { eventId: 'e1' }),
      rev(2, { eventId: 'e3', by: 'iss|bob', cause: 'RecordProposed', status: 'CONTESTED' }),
    ]);
    const cs = planCompensations([own, mark], new Set(['e1']), 'why');
    expect(cs.map((c) => c.action)).toEqual(['REVERT', 'REVERT']);
  });

  it('a reverted approval → back to CANDIDATE, the approval withdrawn and approvedAt cleared', () => {
    const approval = { by: 'iss|rev', via: [], at: '2026-01-02T00:00:00.000Z', eventId: 'ap' };
    const r = rec(
      'a',
      [
        rev(1, { eventId: 'p', status: 'CANDIDATE' }),
        rev(2, { eventId: 'ap', by: 'iss|rev', cause: 'ProposalApproved' }),
      ],
      { approvals: [approval], approvedAt: approval.at },
    );
    const [c] = planCompensations([r], new Set(['ap']), 'why');
    expect(c!.target).toMatchObject({ status: 'CANDIDATE', approvals: [], approvedAt: null });
  });

  it('a reverted reclassification and move → RESTORE the class, label and namespace the revision before had', () => {
    const before = { class: 'FACT', sensitivity: 'CONFIDENTIAL', namespace: 'acme/x' } as const;
    const after = { class: 'PREFERENCE', sensitivity: 'RESTRICTED', namespace: 'acme/y' } as const;
    const r = rec(
      'a',
      [rev(1, { eventId: 'e0', classification: before }), rev(2, { eventId: 'e1', classification: after })],
      after,
    );
    const [c] = planCompensations([r], new Set(['e1']), 'wrong move');
    expect(c).toMatchObject({ action: 'RESTORE' });
    expect(c!.target!.classification).toEqual(before);
    // Nothing to restore when the class, label and namespace stayed, or were never stamped (old revisions).
    const text = rec(
      'b',
      [rev(1, { eventId: 'e0', classification: after }), rev(2, { eventId: 'e1' })],
      after,
    );
    expect(planCompensations([text], new Set(['e1']), 'w')[0]!.target!.classification).toBeNull();
    const old = rec('c', [rev(1, { eventId: 'e0' }), rev(2, { eventId: 'e1' })], after);
    expect(planCompensations([old], new Set(['e1']), 'w')[0]!.target!.classification).toBeNull();
  });

  it('untouched or erased records get no compensation', () => {
    const untouched = rec('a', [rev(1, { eventId: 'e0' })]);
    const erased = rec('b', [rev(1, { eventId: 'e1' }), rev(2, { eventId: 'x', status: 'ERASED' })]);
    expect(planCompensations([untouched, erased], new Set(['e1']), 'why')).toEqual([]);
  });
});

describe('planTaints', () => {
  it('walks derivations transitively with the shortest path, skipping compensated records', () => {
    const edges = [
      { from: 'd1', to: 'f1' },
      { from: 'd2', to: 'd1' },
      { from: 'd2', to: 'f2' },
      { from: 'd3', to: 'd2' },
      { from: 'f2', to: 'f1' },
      { from: 'r', to: 'episode:ep' },
    ];
    const t = planTaints(['f1', 'f2', 'episode:ep'], edges, new Set(['f1', 'f2']), 'why');
    expect(t.map((x) => [x.recordId, x.path])).toEqual([
      ['d1', ['f1', 'd1']],
      ['d2', ['f2', 'd2']],
      ['d3', ['f2', 'd2', 'd3']],
      ['r', ['episode:ep', 'r']],
    ]);
    expect(
      planTaints(['f1', 'f2', 'episode:ep'], [...edges].reverse(), new Set(['f1', 'f2']), 'why'),
    ).toEqual(t);
  });
});

describe('the fold of RolledBack', () => {
  const principal: Principal = {
    iss: 'iss',
    sub: 'rev',
    tenant: 'acme',
    scopes: new Set(['read', 'review']),
    actors: [],
    tokenId: undefined,
    expiresAt: undefined,
  };
  const ctx = {
    principal,
    now: new Date('2026-02-01T00:00:00.000Z'),
    newId: () => '00000000-0000-4000-8000-000000000001',
  };
  const a = rec('a', [rev(1, { eventId: 'e1' })]);
  const d = rec('d', [rev(1, { eventId: 'e9' })], { derivedFrom: ['a'] });
  const plan = {
    rollbackId: 'rb',
    target: { kind: 'EVENT' as const, eventId: 'e1' },
    namespace: 'acme/x',
    compensations: planCompensations([a], new Set(['e1']), 'why'),
    taints: planTaints(['a'], [{ from: 'd', to: 'a' }], new Set(['a']), 'why'),
  };
  const event = decideRollback(ctx, { reason: 'why', idempotencyKey: 'k', eventId: 'e1' }, plan);

  it('applies the plan as data: a new REVERTED revision (history kept), a taint flag on the derived one', () => {
    const s = new MemoryState({ records: [a, d] });
    s.apply(event);
    const ra = s.record('acme', 'a')!;
    expect(ra.revisions.map((v) => [v.version, v.status])).toEqual([
      [1, 'ACTIVE'],
      [2, 'REVERTED'],
    ]);
    expect(ra.revisions[0]!.retiredAt).toBe(ctx.now.toISOString());
    expect(ra.revisions[1]).toMatchObject({ by: 'iss|rev', cause: 'RolledBack' });
    const rd = s.record('acme', 'd')!;
    expect(rd.revisions).toHaveLength(1);
    expect(rd.flags).toContain('tainted');
    expect(rd.taint!.path).toEqual(['a', 'd']);
  });

  it('a restored classification is applied: the record moves back, and every revision carries its own', () => {
    const before = { class: 'FACT', sensitivity: 'INTERNAL', namespace: 'acme/x' } as const;
    const after = { class: 'PREFERENCE', sensitivity: 'RESTRICTED', namespace: 'acme/y' } as const;
    const moved = rec(
      'm',
      [rev(1, { eventId: 'e0', classification: before }), rev(2, { eventId: 'e1', classification: after })],
      after,
    );
    const undo = decideRollback(
      ctx,
      { reason: 'why', idempotencyKey: 'k2', eventId: 'e1' },
      {
        ...plan,
        target: { kind: 'EVENT' as const, eventId: 'e1' },
        compensations: planCompensations([moved], new Set(['e1']), 'why'),
        taints: [],
      },
    );
    const s = new MemoryState({ records: [moved] });
    s.apply(undo);
    const r = s.record('acme', 'm')!;
    expect({ class: r.class, sensitivity: r.sensitivity, namespace: r.namespace }).toEqual(before);
    expect(r.revisions.map((v) => v.classification)).toEqual([before, after, before]);
  });

  it("restored words take the vector the event carries for them (none in an older event); a revert that keeps the words keeps the record's", () => {
    const vector = { modelId: 'm', vector: [1, 0] };
    const restoredVector = { modelId: 'm', vector: [0, 1] };
    const revised = rec('r', [rev(1, { eventId: 'e0' }), rev(2, { eventId: 'e1' })], { embedding: vector });
    const created = rec('c', [rev(1, { eventId: 'e1' })], { embedding: vector });
    const planned = planCompensations([revised, created], new Set(['e1']), 'why');
    const embedded = planned.map((c) =>
      c.recordId === 'r' && c.target ? { ...c, target: { ...c.target, embedding: restoredVector } } : c,
    );
    const undo = (compensations: typeof planned) =>
      decideRollback(
        ctx,
        { reason: 'why', idempotencyKey: 'k3', eventId: 'e1' },
        { ...plan, compensations, taints: [] },
      );
    const s = new MemoryState({ records: [revised, created] });
    s.apply(undo(embedded));
    const r = s.record('acme', 'r')!;
    expect(currentRevisionOf(r).statement.text).toBe('text v1');
    expect(r.embedding).toEqual(restoredVector);
    const c = s.record('acme', 'c')!;
    expect(currentRevisionOf(c).status).toBe('REVERTED');
    expect(c.embedding).toEqual(vector);
    // An event from before rollbacks re-embedded: the restored words have no vector, not the replaced one.
    const older = new MemoryState({ records: [revised, created] });
    older.apply(undo(planned));
    expect(older.record('acme', 'r')!.embedding).toBeNull();
  });

  it('a rollback whose event would not fit one ledger message is refused (BAD_USER_INPUT)', () => {
    const vector = Array.from({ length: 384 }, (_, i) => Math.sin(i + 0.5) / 7);
    const restoring = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        recordId: `r${i}`,
        expectedVersion: 2,
        action: 'RESTORE' as const,
        target: {
          statement: { subject: 's', predicate: 'p', object: 'o', text: `text ${i}` },
          status: 'ACTIVE' as const,
          validFrom: '2026-01-01T00:00:00.000Z',
          validTo: null,
          approvals: [],
          approvedAt: null,
          classification: null,
          embedding: { modelId: 'm', vector },
        },
        reason: 'restored v1 by rollback: why',
      }));
    const decide = (n: number) =>
      decideRollback(
        ctx,
        { reason: 'why', idempotencyKey: 'k4', eventId: 'e1' },
        { ...plan, compensations: restoring(n), taints: [] },
      );
    expect(decide(40).type).toBe('RolledBack');
    expect(() => decide(200)).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
  });

  it('a record that moved on since the plan is sent to review instead', () => {
    const moved = rec('a', [rev(1, { eventId: 'e1' }), rev(2, { eventId: 'e2' })]);
    const s = new MemoryState({ records: [moved, d] });
    s.apply(event);
    const ra = s.record('acme', 'a')!;
    expect(ra.revisions).toHaveLength(2);
    expect(ra.flags).toContain('rollback:review');
    expect(ra.reviewReasons.join(' ')).toContain('changed since the rollback was planned');
  });

  it("a reviewer's approval keeps a flagged record: flags, taint and reasons go, one revision says who", () => {
    const s = new MemoryState({ records: [a, d] });
    s.apply(event);
    const keep = decideApprove(
      { ...ctx, now: new Date('2026-02-02T00:00:00.000Z') },
      { proposalId: 'd', expectedVersion: 1, idempotencyKey: 'keep' },
      'acme/x',
    );
    s.apply(keep);
    const rd = s.record('acme', 'd')!;
    expect(rd).toMatchObject({ flags: [], reviewReasons: [], taint: null });
    expect(rd.revisions.map((v) => [v.version, v.status])).toEqual([
      [1, 'ACTIVE'],
      [2, 'ACTIVE'],
    ]);
    expect(rd.revisions[1]!.reason).toBe('kept after review by rev (tainted via a → d)');
    expect(s.receipt('acme', keep.idempotencyKey)).toMatchObject({ outcome: 'ADMITTED', version: 2 });
  });

  it('a flagged NORMATIVE record is not kept by its own proposer (separation of duties)', () => {
    const norm = rec('n', [rev(1, { eventId: 'e8' })], {
      class: 'NORMATIVE',
      proposedBy: 'iss|rev',
      flags: ['rollback:review'],
      reviewReasons: ['changed since'],
    });
    const s = new MemoryState({ records: [norm] });
    const keep = decideApprove(
      ctx,
      { proposalId: 'n', expectedVersion: 1, idempotencyKey: 'self' },
      'acme/x',
      1,
    );
    s.apply(keep);
    expect(s.receipt('acme', keep.idempotencyKey)).toMatchObject({ outcome: 'REJECTED' });
    expect(s.record('acme', 'n')!.flags).toEqual(['rollback:review']);
  });

  it('a retraction carries its taints: what was derived from the retracted record is flagged with the path', () => {
    const s = new MemoryState({ records: [a, d] });
    const taints = planTaints(['a'], [{ from: 'd', to: 'a' }], new Set(['a']), '', 16, 'retracted');
    expect(taints.map((t) => t.reason)).toEqual(['tainted: derived from a, retracted; path a → d']);
    s.apply(
      decideRetract(
        ctx,
        { id: 'a', expectedVersion: 1, reason: 'wrong', purpose: 'test', idempotencyKey: 'r' },
        'acme/x',
        taints,
      ),
    );
    expect(currentRevisionOf(s.record('acme', 'a')!).status).toBe('RETRACTED');
    const rd = s.record('acme', 'd')!;
    expect(rd.flags).toContain('tainted');
    expect(rd.taint!.path).toEqual(['a', 'd']);
    expect(rd.revisions).toHaveLength(1);
  });
});
