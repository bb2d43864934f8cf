import type { RecordStatus } from '../domain/model.ts';
import type { CosineThresholds } from '../domain/similarity.ts';
import { sameIdentifierSet } from '../domain/identifiers.ts';
import { canonicalText } from './normalize.ts';

/**
 * Relate: classify a new statement against existing candidates. Pure and deterministic; the decision is
 * written into the event, so a replay never re-decides.
 *
 * Rules, strongest first (one decision per statement):
 *  - DUPLICATE: the same wording (canonical, case-insensitive), the same (subject, predicate, object), or
 *    cosine ≥ `duplicate` (0.97 on MiniLM's scale; per model in domain/similarity.ts) when both name the
 *    same identifiers ("ledger writer 1ad620" and "ledger writer 98b1f6" embed as near-identical, but are
 *    two services: domain/identifiers.ts);
 *  - SUPERSEDES: same subject and predicate, another object, and the new wording marks a change
 *    ("now", "no longer", "moved/switched/changed to", "from now on", "anymore", "instead");
 *  - CONTRADICTS: same subject and predicate, another object (or `is` vs `is not` on the same object);
 *  - EXTENDS: same subject and cosine ≥ `extends` (0.85 on MiniLM's scale);
 *  - otherwise independent.
 * Predicates that do not hold one value at a time ('said', 'likes', …) never contradict.
 * A candidate marked `reinforceable: false` is never a duplicate target: reinforcing it would attach
 * the new statement's sources to a record whose readers may not read them (see readableWherever).
 */
export interface RelateCandidate {
  readonly id: string;
  readonly subject: string;
  readonly predicate: string;
  readonly object: string;
  readonly text: string;
  readonly status: RecordStatus;
  readonly cosine: number | null;
  /** False when the new statement may not reinforce this record (default true). */
  readonly reinforceable?: boolean;
}

export interface RelateStatement {
  readonly subject: string;
  readonly predicate: string;
  readonly object: string;
  readonly text: string;
}

export type RelateDecision =
  | {
      readonly kind: 'DUPLICATE';
      readonly target: string;
      readonly confidence: number;
      readonly reason: string;
    }
  | {
      readonly kind: 'SUPERSEDES' | 'CONTRADICTS' | 'EXTENDS';
      readonly target: string;
      readonly confidence: number;
      readonly reason: string;
    }
  | { readonly kind: 'INDEPENDENT' };

const MULTI_VALUED = new Set(['said', 'likes', 'loves', 'enjoys', 'dislikes', 'hates', 'mentioned', 'asked']);
const CHANGE_CUE =
  /\b(now|no longer|anymore|any more|moved to|switched to|migrated to|changed to|from now on|instead|has become|became|replaced)\b/i;

const norm = (s: string): string =>
  canonicalText(s)
    .toLowerCase()
    .replace(/[.!?]+$/, '');
const negated = (p: string): boolean => /\b(not|no longer|never)\b/.test(norm(p));
const basePredicate = (p: string): string =>
  norm(p)
    .replace(/\b(not|no longer|never)\s*/g, '')
    .trim();

/** Both statements name the same identifiers, in any of their parts. */
const sameIdentifiers = (a: RelateStatement, b: RelateStatement): boolean =>
  sameIdentifierSet(`${a.subject} ${a.object} ${a.text}`, `${b.subject} ${b.object} ${b.text}`);

export function classify(
  s: RelateStatement,
  candidates: readonly RelateCandidate[],
  th: Pick<CosineThresholds, 'duplicate' | 'extends'>,
): RelateDecision {
  const live = candidates.filter(
    (c) => c.status === 'ACTIVE' || c.status === 'CONTESTED' || c.status === 'CANDIDATE',
  );
  const ranked = [...live].sort((a, b) => (b.cosine ?? 0) - (a.cosine ?? 0) || a.id.localeCompare(b.id));
  const functional = !MULTI_VALUED.has(basePredicate(s.predicate));
  return (
    duplicateOf(s, ranked, th.duplicate) ??
    (functional ? conflictOf(s, ranked) : undefined) ??
    extensionOf(s, ranked, th.extends) ?? { kind: 'INDEPENDENT' }
  );
}

const sameSP = (c: RelateCandidate, s: RelateStatement): boolean =>
  norm(c.subject) === norm(s.subject) && basePredicate(c.predicate) === basePredicate(s.predicate);

function duplicateOf(
  s: RelateStatement,
  ranked: readonly RelateCandidate[],
  duplicate: number,
): RelateDecision | undefined {
  for (const c of ranked) {
    if (c.reinforceable === false) continue;
    const sameText = norm(c.text) === norm(s.text);
    const sameTriple =
      sameSP(c, s) && norm(c.predicate) === norm(s.predicate) && norm(c.object) === norm(s.object);
    // Near-identical wording is a repeat only when it does not say something else about the same thing:
    // "uses Postgres 14" vs "uses Postgres 16", or "is" vs "is not", are left to the rules below.
    const differs =
      sameSP(c, s) && (norm(c.object) !== norm(s.object) || negated(c.predicate) !== negated(s.predicate));
    const near = (c.cosine ?? 0) >= duplicate && !differs && sameIdentifiers(c, s);
    if (sameText || sameTriple || near) {
      const why = sameText
        ? 'same wording'
        : sameTriple
          ? 'same subject, predicate and object'
          : `cosine ${(c.cosine ?? 0).toFixed(3)}`;
      return { kind: 'DUPLICATE', target: c.id, confidence: 0.95, reason: `duplicate of ${c.id}: ${why}` };
    }
  }
  return undefined;
}

/** For a predicate that holds one value at a time: the first record the statement supersedes or contradicts. */
function conflictOf(s: RelateStatement, ranked: readonly RelateCandidate[]): RelateDecision | undefined {
  for (const c of ranked) {
    if (!sameSP(c, s) || c.status === 'CANDIDATE') continue;
    const polarityFlip = negated(c.predicate) !== negated(s.predicate) && norm(c.object) === norm(s.object);
    const otherObject = norm(c.object) !== norm(s.object) && negated(c.predicate) === negated(s.predicate);
    if (!polarityFlip && !otherObject) continue;
    if (otherObject && CHANGE_CUE.test(s.text)) {
      return {
        kind: 'SUPERSEDES',
        target: c.id,
        confidence: 0.8,
        // Reasons reach receipts and edges: they name the other record by id, never quote its text.
        reason: `supersedes ${c.id}: ${s.subject} ${basePredicate(s.predicate)} changed to "${s.object}"`,
      };
    }
    return {
      kind: 'CONTRADICTS',
      target: c.id,
      confidence: 0.7,
      reason: `contradicts ${c.id}: ${polarityFlip ? 'the opposite' : 'another object'} for the same subject and predicate`,
    };
  }
  return undefined;
}

function extensionOf(
  s: RelateStatement,
  ranked: readonly RelateCandidate[],
  extendsAt: number,
): RelateDecision | undefined {
  for (const c of ranked) {
    if (norm(c.subject) === norm(s.subject) && (c.cosine ?? 0) >= extendsAt && c.status !== 'CANDIDATE') {
      return {
        kind: 'EXTENDS',
        target: c.id,
        confidence: 0.6,
        reason: `extends ${c.id}: same subject, cosine ${(c.cosine ?? 0).toFixed(3)}`,
      };
    }
  }
  return undefined;
}
