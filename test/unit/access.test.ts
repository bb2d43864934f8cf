import { describe, expect, it } from 'vitest';
import { covers, effectiveGrants, intersect, normalize, readableWherever } from '../../src/domain/access.ts';
import { decidePropose, parseCommand, ProposeCommand } from '../../src/domain/commands.ts';
import type { EventOf } from '../../src/domain/events.ts';
import {
  currentRevision,
  evolve,
  type GrantState,
  type ProjectionView,
  type RecordState,
} from '../../src/domain/fold.ts';
import type { Sensitivity } from '../../src/domain/model.ts';
import type { Principal } from '../../src/domain/principal.ts';
import { MINILM_THRESHOLDS } from '../../src/domain/similarity.ts';
import { classify } from '../../src/ingest/relate.ts';
import { namesSubject, phrases, rankLexical, subjectWords, terms } from '../../src/recall/lexical.ts';
import { searchKeys, stems } from '../../src/domain/lexical-terms.ts';
import { projectionViewFor } from '../../src/records/projection-status.ts';

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

describe('issue #9: revoking, admins through agents (access.ts)', () => {
  const revoked = '2026-02-01T00:00:00Z';

  it('revoking the last grant leaves nothing: an identity ever granted never falls back to the default', () => {
    const held = [grant('erin', 'acme/b', 'PUBLIC', null, revoked)];
    expect(effectiveGrants(principal('erin'), undefined, held, defaults, false)).toEqual([]);
    expect(effectiveGrants(principal('erin'), 'incident', held, defaults, false)).toEqual([]);
    // someone never granted anything still gets the tenant default
    expect(effectiveGrants(principal('frank'), undefined, held, defaults, false)).toEqual([
      { root: null, maxSensitivity: 'CONFIDENTIAL' },
    ]);
    // a revoked grant next to a live one: only the live one
    const both = [...held, grant('erin', 'acme/c', 'INTERNAL')];
    expect(effectiveGrants(principal('erin'), undefined, both, defaults, false)).toEqual([
      { root: 'acme/c', maxSensitivity: 'INTERNAL' },
    ]);
  });

  it('an agent whose last grant was revoked reads nothing for anyone', () => {
    const held = [grant('bot', 'acme/a', 'RESTRICTED', null, revoked)];
    expect(effectiveGrants(principal('carol', [{ sub: 'bot' }]), 'x', held, defaults, false)).toEqual([]);
    expect(effectiveGrants(principal('root', [{ sub: 'bot' }]), 'x', held, defaults, true)).toEqual([]);
  });

  it("an admin reads everything only directly; through an agent, the agent's grants narrow it", () => {
    const held = [grant('bot', 'acme/a/x', 'INTERNAL')];
    expect(effectiveGrants(principal('root'), 'x', held, defaults, true)).toEqual([
      { root: null, maxSensitivity: 'RESTRICTED' },
    ]);
    expect(effectiveGrants(principal('root', [{ sub: 'bot' }]), 'x', held, defaults, true)).toEqual([
      { root: 'acme/a/x', maxSensitivity: 'INTERNAL' },
    ]);
    // every hop of a chain narrows
    const chain = [...held, grant('bot-2', 'acme', 'PUBLIC')];
    expect(
      effectiveGrants(principal('root', [{ sub: 'bot-2' }, { sub: 'bot' }]), 'x', chain, defaults, true),
    ).toEqual([{ root: 'acme/a/x', maxSensitivity: 'PUBLIC' }]);
  });

  it('an agent never granted anything acts with the tenant default, also for an admin', () => {
    expect(effectiveGrants(principal('root', [{ sub: 'new-bot' }]), 'x', [], defaults, true)).toEqual([
      { root: null, maxSensitivity: 'CONFIDENTIAL' },
    ]);
    expect(
      effectiveGrants(principal('root', [{ sub: 'new-bot' }]), 'x', [], { defaultClearance: null }, true),
    ).toEqual([]);
    // a principal cleared above the default is held to the default through an ungranted agent
    const held = [grant('hr', 'acme/hr', 'RESTRICTED')];
    expect(effectiveGrants(principal('hr', [{ sub: 'new-bot' }]), 'x', held, defaults, false)).toEqual([
      { root: 'acme/hr', maxSensitivity: 'CONFIDENTIAL' },
    ]);
  });
});

describe('issue #9: what a relation may change (readableWherever, fold, relate)', () => {
  const at = (namespace: string, sensitivity: Sensitivity) => ({ namespace, sensitivity });

  it('readableWherever: inside the other subtree at a label no higher', () => {
    expect(readableWherever(at('acme/a', 'INTERNAL'), at('acme/a', 'INTERNAL'))).toBe(true);
    expect(readableWherever(at('acme/a/x', 'PUBLIC'), at('acme/a', 'INTERNAL'))).toBe(true);
    expect(readableWherever(at('acme/a', 'CONFIDENTIAL'), at('acme/a', 'INTERNAL'))).toBe(false);
    expect(readableWherever(at('acme', 'PUBLIC'), at('acme/a', 'RESTRICTED'))).toBe(false);
    expect(readableWherever(at('acme/b', 'PUBLIC'), at('acme/a', 'RESTRICTED'))).toBe(false);
    expect(readableWherever(at('acme/ab', 'PUBLIC'), at('acme/a', 'RESTRICTED'))).toBe(false);
  });

  /** Folds a proposal `relation`-linked to `target` (already ACTIVE) and returns both records after. */
  function contest(
    kind: 'CONTRADICTS' | 'SUPERSEDES',
    target: { namespace: string; sensitivity: Sensitivity },
    mine: { namespace: string; sensitivity: Sensitivity },
  ) {
    const records = new Map<string, RecordState>();
    const view: ProjectionView = {
      record: (_t, id) => records.get(id),
      entity: () => undefined,
      receipt: () => undefined,
      episode: () => undefined,
      grant: () => undefined,
    };
    let n = 0;
    const ctx = {
      principal: principal('hr'),
      now: new Date('2026-03-01T00:00:00Z'),
      newId: () => `00000000-0000-4000-8000-${(++n).toString(16).padStart(12, '0')}`,
    };
    const propose = (
      where: { namespace: string; sensitivity: Sensitivity },
      object: string,
      relation: { kind: 'CONTRADICTS' | 'SUPERSEDES'; target: string } | null,
    ) => {
      const cmd = parseCommand(ProposeCommand, {
        ...where,
        class: 'FACT',
        statement: { subject: 'checkout', predicate: 'stores sessions in', object, text: `x ${object}` },
        validFrom: '2026-01-01T00:00:00Z',
        purpose: 'test',
        idempotencyKey: `k-${object}`,
      });
      const [e] = decidePropose(ctx, cmd, [], {
        status: 'ACTIVE',
        relation: relation ? { ...relation, confidence: 0.7, reason: 'test' } : null,
      });
      const eff = evolve(view, e!);
      for (const r of [eff.record!, ...(eff.others ?? [])]) records.set(r.id, r);
      return { id: (e as EventOf<'RecordProposed'>).payload.recordId, outcome: eff.receipt!.outcome };
    };
    const t = propose(target, 'redis', null);
    const m = propose(mine, 'memcached', { kind, target: t.id });
    const status = (id: string) => currentRevision(records.get(id)!).status;
    return {
      outcome: m.outcome,
      target: status(t.id),
      mine: status(m.id),
      targetRevisions: records.get(t.id)!.revisions.length,
      related: records.get(m.id)!.relations.map((r) => `${r.type} ${r.target === t.id}`),
    };
  }

  it('a contradiction equally visible on both sides marks both CONTESTED', () => {
    const r = contest('CONTRADICTS', at('acme/a', 'INTERNAL'), at('acme/a', 'INTERNAL'));
    expect(r).toMatchObject({ outcome: 'CONTESTED', target: 'CONTESTED', mine: 'CONTESTED' });
  });

  it('a more hidden contradiction leaves the visible record ACTIVE (no revision, no "contradicted by"), marks only itself', () => {
    const r = contest('CONTRADICTS', at('acme/a', 'INTERNAL'), at('acme/a', 'CONFIDENTIAL'));
    expect(r).toMatchObject({
      outcome: 'CONTESTED',
      target: 'ACTIVE',
      mine: 'CONTESTED',
      targetRevisions: 1,
    });
    expect(r.related).toEqual(['CONTRADICTS true']);
  });

  it('a less hidden contradiction marks the more hidden target only', () => {
    const r = contest('CONTRADICTS', at('acme/a', 'CONFIDENTIAL'), at('acme/a', 'PUBLIC'));
    expect(r).toMatchObject({ outcome: 'CONTESTED', target: 'CONTESTED', mine: 'ACTIVE' });
  });

  it('neither side readable wherever the other is: the relation is kept, nothing is marked', () => {
    const r = contest('CONTRADICTS', at('acme', 'PUBLIC'), at('acme/a', 'INTERNAL'));
    expect(r).toMatchObject({ outcome: 'ADMITTED', target: 'ACTIVE', mine: 'ACTIVE', targetRevisions: 1 });
    expect(r.related).toEqual(['CONTRADICTS true']);
  });

  it("a supersede the target's readers may not see does not close the target", () => {
    const hidden = contest('SUPERSEDES', at('acme/a', 'INTERNAL'), at('acme/a', 'CONFIDENTIAL'));
    expect(hidden).toMatchObject({
      outcome: 'ADMITTED',
      target: 'ACTIVE',
      mine: 'ACTIVE',
      targetRevisions: 1,
    });
    const open = contest('SUPERSEDES', at('acme/a', 'CONFIDENTIAL'), at('acme/a/x', 'INTERNAL'));
    expect(open).toMatchObject({ outcome: 'SUPERSEDED', target: 'SUPERSEDED', mine: 'ACTIVE' });
  });

  it('relate: a record the new statement may not reinforce is never its duplicate target', () => {
    const s = { subject: 'checkout', predicate: 'uses', object: 'redis', text: 'Checkout uses Redis.' };
    const c = { id: 'r1', ...s, status: 'ACTIVE' as const, cosine: 1 };
    expect(classify(s, [c], MINILM_THRESHOLDS).kind).toBe('DUPLICATE');
    expect(classify(s, [{ ...c, reinforceable: false }], MINILM_THRESHOLDS).kind).not.toBe('DUPLICATE');
  });
});

describe('issue #9: projection status (projection-status.ts)', () => {
  const status = {
    healthy: true,
    partitions: [{ partition: 0, checkpoint: '41', highWatermark: '42', lag: 0 }],
    totalLag: 0,
    stalled: [{ partition: 0, offsets: '42..42', since: new Date(0), attempts: 3, error: 'key missing' }],
  };
  it('admins see offsets, lag and stalls; anyone else only whether the projector is healthy', () => {
    expect(projectionViewFor(status, true)).toEqual(status);
    expect(projectionViewFor(status, false)).toEqual({
      healthy: true,
      partitions: [],
      totalLag: null,
      stalled: [],
    });
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

  it("ranks on word stems: a record whose words stem like the query's matches, plain words do not", () => {
    const painted = [
      { id: 'p', text: 'Melanie was painting a sunrise' },
      { id: 'q', text: 'Melanie went camping' },
    ];
    expect(stems('painted paints painting')).toEqual(['paint', 'paint', 'paint']);
    expect(rankLexical('What has Melanie painted?', painted, 10)).toEqual(['p', 'q']);
    expect(rankLexical('painted', painted, 10)).toEqual(['p']);
    // the issue #10 baseline keeps its plain words: "painted" is not "painting" there
    expect(rankLexical('painted', painted, 10, { analyze: terms })).toEqual([]);
  });

  it("a query names a subject when the subject's words occur in it as one run, whatever the case, hyphen or possessive", () => {
    const q = subjectWords("When did Melanie's kids check the payments API canary?");
    expect(namesSubject(q, 'Melanie')).toBe(true);
    expect(namesSubject(q, 'payments-api')).toBe(true);
    expect(namesSubject(subjectWords('is payments-api up'), 'Payments API')).toBe(true);
    expect(namesSubject(q, 'Caroline')).toBe(false);
    expect(namesSubject(subjectWords('what does Mel like'), 'Melanie')).toBe(false); // a word, not a prefix
    expect(namesSubject(subjectWords('ask Anna Lee'), 'Anna Lee')).toBe(true);
    expect(namesSubject(subjectWords('ask Lee Anna'), 'Anna Lee')).toBe(false); // the run, in order
    // pronouns and one-letter subjects name no one
    expect(namesSubject(subjectWords('what do we prefer'), 'we')).toBe(false);
    expect(namesSubject(subjectWords('what did I say'), 'I')).toBe(false);
    expect(namesSubject([], 'Melanie')).toBe(false);
  });

  it('search keys are the part a word shares with its stem, so a substring search finds every form', () => {
    expect(searchKeys('happy painted Payments-API 16 go')).toEqual([
      'happ',
      'paint',
      'payments-api',
      '16',
      'go',
    ]);
    for (const form of ['happiness', 'happily', 'happy'])
      expect(form.includes(searchKeys('happy')[0]!)).toBe(true);
  });
});
