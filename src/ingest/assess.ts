import { Sensitivities, type Sensitivity } from '../domain/model.ts';
import type { Principal } from '../domain/principal.ts';

/**
 * Label and score, pure.
 * Label: the high-water mark of the record's own label and every source it cites — derivation never
 * declassifies. Score: a source-trust prior (authoritative > human > agent-verified > agent-inferred)
 * blended with the extractor's confidence, plus a small bonus per corroborating source.
 */
export const highWaterMark = (labels: readonly Sensitivity[]): Sensitivity =>
  labels.reduce<Sensitivity>(
    (hi, l) => (Sensitivities.indexOf(l) > Sensitivities.indexOf(hi) ? l : hi),
    'PUBLIC',
  );

export type SourceTrust = 'authoritative' | 'human' | 'agent-verified' | 'agent-inferred';

export const TRUST_PRIOR: Readonly<Record<SourceTrust, number>> = {
  authoritative: 0.95,
  human: 0.8,
  'agent-verified': 0.65,
  'agent-inferred': 0.45,
};

/**
 * Who stands behind a write: an `act` chain means an agent acting for the person; an agent's claim counts
 * as verified only when the writer says so (`ext['muninn:verified'] === true`, e.g. a test it ran).
 * Imports (`source` starting with `import:`) by an admin are authoritative.
 */
export function sourceTrust(principal: Principal, source: string | null, verified: boolean): SourceTrust {
  if (source?.startsWith('import:') && principal.scopes.has('admin')) return 'authoritative';
  if (principal.actors.length === 0) return 'human';
  return verified ? 'agent-verified' : 'agent-inferred';
}

export function scoreConfidence(trust: SourceTrust, extraction: number, corroborations: number): number {
  const base = 0.6 * TRUST_PRIOR[trust] + 0.4 * Math.min(1, Math.max(0, extraction));
  const bonus = Math.min(0.15, 0.05 * Math.max(0, corroborations));
  return Math.round(Math.min(0.99, base + bonus) * 1000) / 1000;
}
