import { describe, expect, it } from 'vitest';
import type { ReadScope } from '../../src/ports/graph.ts';
import { recordedRoles } from './roles.ts';

/**
 * Relate lookups asked for in the same event-loop turn (coalesce.ts): those under one scope, namespace
 * and k go as one statement of all their queries, and each caller gets the answers of its own queries.
 * Over vectors held in process, lookups under other scopes share the statement too, each scope as its
 * own row of `$groups`; otherwise a lookup under another scope has a statement of its own.
 */
const scope = (tenant: string): ReadScope => ({
  tenant,
  grants: [{ root: null, maxSensitivity: 'INTERNAL' }],
});
const row = (i: number, id: string) => ({
  i,
  id,
  namespace: 'acme',
  sensitivity: 'INTERNAL',
  class: 'FACT',
  subject: 's',
  predicate: 'p',
  object: 'o',
  text: 't',
  status: 'ACTIVE',
  version: 1,
  confidence: 0.9,
  score: null,
});
const q = (subject: string) => ({ subject, vector: null, modelId: 'm1' });

describe('relate lookups of one turn', () => {
  it('under the same scope: one statement, each caller answered from its own queries', async () => {
    const r = recordedRoles({ 'relate.bySubjectMany': [row(0, 'a0'), row(1, 'a1'), row(2, 'b0')] });
    const [a, b] = await Promise.all([
      r.lookups.relateCandidatesMany(scope('t1'), 'acme', [q('Alpha'), q('Beta')], 5),
      r.lookups.relateCandidatesMany(scope('t1'), 'acme', [q('Gamma')], 5),
    ]);
    const sent = r.db.sent.filter((s) => s.op === 'relate.bySubjectMany');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.params['qs']).toEqual([
      { i: 0, subjectKey: 'alpha' },
      { i: 1, subjectKey: 'beta' },
      { i: 2, subjectKey: 'gamma' },
    ]);
    expect(a.map((cs) => cs.map((c) => c.id))).toEqual([['a0'], ['a1']]);
    expect(b.map((cs) => cs.map((c) => c.id))).toEqual([['b0']]);
  });

  it('under another tenant, or another namespace: a statement of its own with its own parameters', async () => {
    const r = recordedRoles();
    await Promise.all([
      r.lookups.relateCandidatesMany(scope('t1'), 'acme', [q('Alpha')], 5),
      r.lookups.relateCandidatesMany(scope('t2'), 'acme', [q('Alpha')], 5),
      r.lookups.relateCandidatesMany(scope('t1'), 'acme/eng', [q('Alpha')], 5),
    ]);
    const sent = r.db.sent.filter((s) => s.op === 'relate.bySubjectMany');
    expect(sent.map((s) => [s.params['tenant'], s.params['ns']]).sort()).toEqual([
      ['t1', 'acme'],
      ['t1', 'acme/eng'],
      ['t2', 'acme'],
    ]);
  });

  it('over vectors held in process, under two tenants: one statement, each scope its own row', async () => {
    const r = recordedRoles({
      'recall.size': [{ c: 3 }],
      'recall.vectorStamps': [
        { i: 0, ns: 'acme', epoch: 'e1', seq: 1 },
        { i: 1, ns: 'acme', epoch: 'e2', seq: 1 },
      ],
      'recall.vectorLoad': [
        { tenant: 't1', ns: 'acme', id: 'a1', model: 'm1', vector: [0.1, 0.2] },
        { tenant: 't2', ns: 'acme', id: 'b1', model: 'm1', vector: [0.2, 0.1] },
      ],
      'relate.bySubjectAndHeldTogether': [
        { g: 0, ...row(0, 'a0') },
        { g: 0, ...row(0, 'a1'), score: 0.9 },
        { g: 1, ...row(0, 'b1'), score: 0.8 },
      ],
    });
    const v = (subject: string) => ({ subject, vector: [0.1, 0.2], modelId: 'm1' });
    const [a, b] = await Promise.all([
      r.lookups.relateCandidatesMany(scope('t1'), 'acme', [v('Alpha')], 5),
      r.lookups.relateCandidatesMany(scope('t2'), 'acme', [v('Beta')], 5),
    ]);
    const sent = r.db.sent.filter((s) => s.op.startsWith('relate.'));
    expect(sent.map((s) => s.op)).toEqual(['relate.bySubjectAndHeldTogether']);
    const groups = sent[0]!.params['groups'] as Array<Record<string, unknown>>;
    // Each group: its own tenant's scope and subject, and a ranking of its own tenant's vectors only.
    expect(groups).toMatchObject([
      { g: 0, tenant: 't1', ns: 'acme', qs: [{ i: 0, subjectKey: 'alpha' }], held: [{ i: 0, ids: ['a1'] }] },
      { g: 1, tenant: 't2', ns: 'acme', qs: [{ i: 0, subjectKey: 'beta' }], held: [{ i: 0, ids: ['b1'] }] },
    ]);
    expect(a.map((cs) => cs.map((c) => c.id))).toEqual([['a0', 'a1']]);
    expect(b.map((cs) => cs.map((c) => [c.id, c.cosine]))).toEqual([[['b1', expect.closeTo(0.6, 9)]]]);
  });

  it("a failing lookup fails its own scope's callers only", async () => {
    const r = recordedRoles({ 'relate.bySubjectMany': [row(0, 'a0')] });
    const read = r.db.read;
    r.db.read = (op, cypher, params) =>
      params?.['tenant'] === 't2' ? Promise.reject(new Error('t2 unavailable')) : read(op, cypher, params);
    const [mine, theirs] = await Promise.allSettled([
      r.lookups.relateCandidatesMany(scope('t1'), 'acme', [q('Alpha')], 5),
      r.lookups.relateCandidatesMany(scope('t2'), 'acme', [q('Alpha')], 5),
    ]);
    expect(mine).toMatchObject({ status: 'fulfilled', value: [[{ id: 'a0' }]] });
    expect(theirs).toMatchObject({ status: 'rejected', reason: { message: 't2 unavailable' } });
  });
});
