import { describe, expect, it } from 'vitest';
import {
  ApproveCommand,
  decideApprove,
  decideFeedback,
  decidePropose,
  decideRevise,
  parseCommand,
  ProposeCommand,
  receiptKey,
  ReviseCommand,
  type DecideContext,
} from '../../src/domain/commands.ts';
import { type EventOf, type LedgerEvent } from '../../src/domain/events.ts';
import { decodeEvent, encodeEvent } from '../../src/domain/event-wire.ts';
import { utilityOf } from '../../src/domain/fold.ts';
import { handleFor, recordOfHandle } from '../../src/domain/handles.ts';
import { MemoryState } from '../../src/domain/memory-state.ts';
import type { Principal } from '../../src/domain/principal.ts';
import { approversRequired, decideApproval, parseApproverRules, partiesOf } from '../../src/domain/review.ts';
import { load } from '../../src/config/index.ts';
import { MINILM_THRESHOLDS } from '../../src/domain/similarity.ts';
import { classify } from '../../src/ingest/relate.ts';

/*
 * Issue #9 (write side), the pure parts: separation-of-duties rules, per-principal idempotency keys,
 * caller-bound handles, one vote per caller, and reasons that never quote another record.
 */

const ISS = 'https://issuer.test';
const person = (
  sub: string,
  actors: string[] = [],
  scopes: string[] = ['read', 'write', 'review'],
): Principal => ({
  iss: ISS,
  sub,
  tenant: 'acme',
  scopes: new Set(scopes) as Principal['scopes'],
  actors: actors.map((a) => ({ iss: ISS, sub: a })),
  tokenId: undefined,
  expiresAt: undefined,
});
const key = (sub: string) => `${ISS}|${sub}`;

function counter(): () => string {
  let n = 0;
  return () => `00000000-0000-4000-8000-${(++n).toString(16).padStart(12, '0')}`;
}
const ids = counter();
const at = (p: Principal, minute = 0): DecideContext => ({
  principal: p,
  now: new Date(Date.UTC(2024, 4, 1, 10, minute)),
  newId: ids,
});

function proposeNorm(p: Principal, o: Record<string, unknown> = {}): EventOf<'RecordProposed'> {
  const cmd = parseCommand(ProposeCommand, {
    namespace: 'acme/ops',
    class: 'NORMATIVE',
    statement: { subject: 'deploys', predicate: 'must', object: 'skip tests', text: 'Deploys skip tests.' },
    purpose: 'test',
    idempotencyKey: `k-${ids()}`,
    ...o,
  });
  const [e] = decidePropose(at(p), cmd, [], 'CANDIDATE');
  return e as EventOf<'RecordProposed'>;
}

const approveBy = (p: Principal, recordId: string, required: number, minute = 1): LedgerEvent =>
  decideApprove(
    at(p, minute),
    parseCommand(ApproveCommand, { proposalId: recordId, expectedVersion: 1 }),
    'acme/ops',
    required,
  );

function fold(...events: LedgerEvent[]): MemoryState {
  const s = new MemoryState();
  for (const e of events) s.apply(e);
  return s;
}

describe('MUNINN_REVIEW_APPROVERS rules', () => {
  it('the default asks one other reviewer for NORMATIVE and none for other classes', () => {
    const { rules, problems } = parseApproverRules('NORMATIVE=1');
    expect(problems).toEqual([]);
    expect(rules.NORMATIVE).toBe(1);
    expect(rules.FACT).toBe(0);
    expect(rules.DECISION).toBe(0);
  });

  it('classes, a * default, and NORMATIVE never below 1', () => {
    const { rules } = parseApproverRules('NORMATIVE=2, DECISION=1, *=0');
    expect([rules.NORMATIVE, rules.DECISION, rules.FACT]).toEqual([2, 1, 0]);
    expect(parseApproverRules('').rules.NORMATIVE).toBe(1);
    expect(parseApproverRules('*=1').rules.OBSERVATION).toBe(1);
  });

  it.each([['NORMATIVE=0'], ['FACTS=1'], ['NORMATIVE'], ['DECISION=9'], ['decision=1']])(
    '%s is a configuration error',
    (spec) => {
      expect(parseApproverRules(spec).problems.length).toBeGreaterThan(0);
      expect(() =>
        load({ NEO4J_URI: 'bolt://x:1', KAFKA_BROKERS: 'x:1', MUNINN_REVIEW_APPROVERS: spec }),
      ).toThrow(/MUNINN_REVIEW_APPROVERS/);
    },
  );

  it('the config carries the parsed rules', () => {
    const c = load({
      NEO4J_URI: 'bolt://x:1',
      KAFKA_BROKERS: 'x:1',
      MUNINN_REVIEW_APPROVERS: 'NORMATIVE=2,DECISION=1',
    });
    expect(c.review.approvers.NORMATIVE).toBe(2);
    expect(c.review.approvers.DECISION).toBe(1);
    expect(load({ NEO4J_URI: 'bolt://x:1', KAFKA_BROKERS: 'x:1' }).review.approvers.NORMATIVE).toBe(1);
  });

  it('NORMATIVE and injection-flagged records need at least one other reviewer whatever is configured', () => {
    expect(approversRequired(0, { class: 'NORMATIVE', flags: [] })).toBe(1);
    expect(approversRequired(0, { class: 'FACT', flags: ['injection:override_instruction'] })).toBe(1);
    expect(approversRequired(0, { class: 'FACT', flags: ['pii:email'] })).toBe(0);
    expect(approversRequired(2, { class: 'FACT', flags: [] })).toBe(2);
  });
});

describe('decideApproval (separation of duties)', () => {
  const proposal = partiesOf(person('alice'), [{ iss: ISS, sub: 'bot-1' }]);
  const by = (sub: string, via: string[] = []) => ({ by: key(sub), via: via.map(key) });

  it('the proposer, her agent acting for someone else, or she through another agent → SELF', () => {
    expect(decideApproval(proposal, [], by('alice'), 1).kind).toBe('SELF');
    expect(decideApproval(proposal, [], by('carol', ['bot-1']), 1).kind).toBe('SELF');
    expect(decideApproval(proposal, [], by('alice', ['bot-2']), 1).kind).toBe('SELF');
    // an agent issuer defaults to the principal's
    expect(partiesOf({ iss: ISS, sub: 'x' }, [{ iss: undefined, sub: 'bot-1' }])).toEqual([
      key('x'),
      key('bot-1'),
    ]);
  });

  it('where no separation is asked (0), the proposer may approve', () => {
    expect(decideApproval(proposal, [], by('alice'), 0)).toEqual({ kind: 'FINAL', have: 1, need: 1 });
  });

  it('N=2: a first other reviewer is PARTIAL, the same one again (or via the same agent) AGAIN, a second FINAL', () => {
    expect(decideApproval(proposal, [], by('rev-1'), 2)).toEqual({ kind: 'PARTIAL', have: 1, need: 2 });
    const prior = [by('rev-1', ['bot-9'])];
    expect(decideApproval(proposal, prior, by('rev-1'), 2).kind).toBe('AGAIN');
    expect(decideApproval(proposal, prior, by('rev-2', ['bot-9']), 2).kind).toBe('AGAIN');
    expect(decideApproval(proposal, prior, by('rev-2'), 2)).toEqual({ kind: 'FINAL', have: 2, need: 2 });
  });
});

describe('the fold records approvals and enforces separation itself', () => {
  const alice = person('alice');

  it('a self-approval event is REJECTED (review:self-approval) and changes nothing', () => {
    const p = proposeNorm(alice);
    const s = fold(p);
    const before = s.record('acme', p.payload.recordId);
    const e = approveBy(alice, p.payload.recordId, 1);
    s.apply(e);
    expect(s.receipt('acme', e.idempotencyKey)).toMatchObject({ outcome: 'REJECTED', version: 1 });
    expect(s.receipt('acme', e.idempotencyKey)?.reason).toMatch(/^review:self-approval/);
    expect(s.record('acme', p.payload.recordId)).toBe(before);
  });

  it('with required 2: the first approval is partial (recorded, still CANDIDATE v1), the second activates and records approvedAt', () => {
    const p = proposeNorm(alice);
    const id = p.payload.recordId;
    const first = approveBy(person('rev-1'), id, 2, 1);
    const s = fold(p, first);
    expect(s.receipt('acme', first.idempotencyKey)).toMatchObject({ outcome: 'QUEUED', version: 1 });
    const partial = s.record('acme', id)!;
    expect(partial.revisions.at(-1)!.status).toBe('CANDIDATE');
    expect(partial.approvals.map((a) => a.by)).toEqual([key('rev-1')]);
    expect(partial.approvedAt).toBeNull();

    const second = approveBy(person('rev-2'), id, 2, 2);
    s.apply(second);
    const done = s.record('acme', id)!;
    expect(s.receipt('acme', second.idempotencyKey)).toMatchObject({ outcome: 'ADMITTED', version: 2 });
    expect(done.revisions.at(-1)!.status).toBe('ACTIVE');
    expect(done.approvedAt).toBe(second.recordedAt);
    expect(done.approvals.map((a) => a.by)).toEqual([key('rev-1'), key('rev-2')]);
  });

  it('a v1 approval from the ledger decodes (upcast, required 0) and still cannot self-approve a NORMATIVE record', () => {
    const p = proposeNorm(alice);
    const v2 = approveBy(alice, p.payload.recordId, 0) as EventOf<'ProposalApproved'>;
    const { required: _r, ...v1payload } = v2.payload;
    const decoded = decodeEvent(JSON.stringify({ ...v2, schemaVersion: 1, payload: v1payload }));
    expect(decoded.ok).toBe(true);
    const e = (decoded as { ok: true; event: EventOf<'ProposalApproved'> }).event;
    expect(e.schemaVersion).toBe(2);
    expect(e.payload.required).toBe(0);
    const s = fold(p, e);
    expect(s.receipt('acme', e.idempotencyKey)?.outcome).toBe('REJECTED');
    // and another reviewer's v1 approval still activates a FACT-like norm as before
    const other = approveBy(person('rev-1'), p.payload.recordId, 0);
    const { required: _x, ...p1 } = (other as EventOf<'ProposalApproved'>).payload;
    const d2 = decodeEvent(
      encodeEvent({ ...other, schemaVersion: 1, payload: p1 } as unknown as LedgerEvent),
    );
    s.apply((d2 as { ok: true; event: LedgerEvent }).event);
    expect(s.record('acme', p.payload.recordId)!.approvedAt).not.toBeNull();
  });

  it('revising the statement of an approved record clears its approval (the reviewers approved other text)', () => {
    const p = proposeNorm(alice);
    const id = p.payload.recordId;
    const s = fold(p, approveBy(person('rev-1'), id, 1));
    expect(s.record('acme', id)!.approvedAt).not.toBeNull();
    const rev = decideRevise(
      at(alice, 5),
      parseCommand(ReviseCommand, {
        id,
        expectedVersion: 2,
        statement: { subject: 'deploys', predicate: 'must', object: 'x', text: 'Deploys may skip tests.' },
        purpose: 'p',
        idempotencyKey: 'r1',
      }),
      'acme/ops',
    );
    s.apply(rev);
    const r = s.record('acme', id)!;
    expect(r.revisions.at(-1)!.status).toBe('ACTIVE');
    expect(r.approvedAt).toBeNull();
    expect(r.approvals).toEqual([]);
  });
});

describe('idempotency keys are per principal; derived keys cannot be taken', () => {
  it("two principals' equal keys are different stored keys; a writer's key never equals a derived one", () => {
    const a = person('alice');
    const m = person('mallory');
    expect(receiptKey(a, 'k1')).not.toBe(receiptKey(m, 'k1'));
    expect(receiptKey(a, 'approve:r1:v1')).not.toBe(receiptKey(a, 'approve:r1:v1', 'derived'));
    expect(receiptKey(a, 'k1')).toBe(receiptKey(a, 'k1'));
  });

  it('a 256-character key is hashed, so the stored key plus a statement suffix fits the envelope', () => {
    const long = 'x'.repeat(256);
    const k = receiptKey(person('alice'), long);
    expect(k.length + '#stmt:9999#entity:00000000-0000-4000-8000-000000000001'.length).toBeLessThanOrEqual(
      256,
    );
    expect(receiptKey(person('alice'), `${long}y`)).not.toBe(k);
  });

  it('the same approve command by two reviewers has two keys (one cannot pre-empt the other)', () => {
    const e1 = approveBy(person('rev-1'), 'r1', 1);
    const e2 = approveBy(person('rev-2'), 'r1', 1);
    expect(e1.idempotencyKey).not.toBe(e2.idempotencyKey);
  });
});

describe('feedback: handles bound to the caller, one vote per caller and record', () => {
  it('a handle verifies only for the caller it was served to', () => {
    const h = handleFor('recall-1', 'rec-1', 'k', key('alice'));
    expect(recordOfHandle('recall-1', h, 'k', key('alice'))).toBe('rec-1');
    expect(recordOfHandle('recall-1', h, 'k', key('bob'))).toBeUndefined();
    expect(recordOfHandle('recall-1', h, 'k', '')).toBeUndefined();
  });

  it('five WRONG verdicts from one caller in five recalls count as one; two callers count twice; a new verdict replaces the old', () => {
    const p = proposeNorm(person('alice'), { class: 'FACT' });
    const id = p.payload.recordId;
    const s = fold(p);
    const vote = (sub: string, recall: string, verdict: 'USED' | 'WRONG') =>
      s.apply(decideFeedback(at(person(sub)), { recallId: recall, handle: 'h', verdict }, id, 'acme/ops'));
    for (let i = 0; i < 5; i++) vote('mallory', `recall-${i}`, 'WRONG');
    expect(s.record('acme', id)!.feedback).toEqual({ used: 0, ignored: 0, wrong: 1 });
    expect(utilityOf(s.record('acme', id)!.feedback)).toBeGreaterThan(-1);
    vote('bob', 'recall-b', 'WRONG');
    expect(s.record('acme', id)!.feedback.wrong).toBe(2);
    vote('mallory', 'recall-9', 'USED');
    expect(s.record('acme', id)!.feedback).toEqual({ used: 1, ignored: 0, wrong: 1 });
  });
});

describe('relate reasons name other records by id only', () => {
  const stored = {
    id: 'r-secret',
    subject: 'vault key',
    predicate: 'rotates on',
    object: 'first Monday',
    text: 'The vault key rotates on the first Monday (secret schedule).',
    status: 'ACTIVE' as const,
    cosine: null,
  };
  it.each([
    ['CONTRADICTS', 'The vault key rotates on the last Friday.'],
    ['SUPERSEDES', 'The vault key now rotates on the last Friday.'],
  ])('%s', (kind, text) => {
    const d = classify(
      { subject: 'vault key', predicate: 'rotates on', object: 'last Friday', text },
      [stored],
      MINILM_THRESHOLDS,
    );
    expect(d.kind).toBe(kind);
    const reason = 'reason' in d ? d.reason : '';
    expect(reason).toContain('r-secret');
    expect(reason).not.toContain('first Monday');
    expect(reason).not.toContain('secret schedule');
  });
});
