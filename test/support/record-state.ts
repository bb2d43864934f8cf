import type { EntityState, RecordState } from '../../src/domain/fold.ts';
import type { Sensitivity } from '../../src/domain/model.ts';

/** A unit vector of `dims` dimensions along axis `i`: distinct records get orthogonal vectors. */
export const unitVector = (i: number, dims = 384): number[] =>
  Array.from({ length: dims }, (_, j) => (j === i ? 1 : 0));

/**
 * One ACTIVE FACT record with a single revision, as the fold would hold it, for tests that write state
 * through the projection port directly (the contract tier).
 */
export function recordState(o: {
  tenant: string;
  id: string;
  namespace: string;
  subject: string;
  text: string;
  sensitivity?: Sensitivity;
  about?: string[];
  embedding: { modelId: string; vector: number[] };
}): RecordState {
  const t0 = '2026-01-01T00:00:00.000Z';
  return {
    tenant: o.tenant,
    id: o.id,
    namespace: o.namespace,
    class: 'FACT',
    sensitivity: o.sensitivity ?? 'PUBLIC',
    confidence: 0.9,
    timeSource: 'STATED',
    rationale: null,
    about: o.about ?? [],
    sources: [],
    ext: {},
    createdAt: t0,
    proposedBy: 'iss|alice',
    proposedVia: [],
    approvals: [],
    approvedAt: null,
    revisions: [
      {
        version: 1,
        statement: { subject: o.subject, predicate: 'note', object: o.id, text: o.text },
        status: 'ACTIVE',
        validFrom: t0,
        validTo: null,
        recordedAt: t0,
        retiredAt: null,
        changesetId: null,
        eventId: `ev-${o.id}`,
        reason: null,
      },
    ],
    relations: [],
    reviewReasons: [],
    flags: [],
    embedding: o.embedding,
    episodeId: null,
    reinforcements: 0,
    feedback: { used: 0, ignored: 0, wrong: 0 },
    votes: {},
  };
}

/** An entity named by its id, with no type, aliases, external ids or vector; `sameAs` links it tentatively. */
export const entityState = (tenant: string, id: string, sameAs: string | null = null): EntityState => ({
  tenant,
  id,
  name: id,
  type: null,
  aliases: [],
  externalIds: [],
  sameAs: sameAs ? { entityId: sameAs, confidence: 0.9 } : null,
  embedding: null,
});
