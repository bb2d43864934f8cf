import { entityIdFor } from '../domain/commands.ts';
import type { ReadScope } from '../domain/policy.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { EntityFacts, IngestLookups } from '../ports/ingest-lookups.ts';
import { embedText, OBSERVATION, RELATE_K, type Draft, type PlanFacts } from './plan.ts';
import { refKey, refName } from './plan-entities.ts';
import type { StageTimes } from './stage-times.ts';

/**
 * The write path's gather step: everything `plan` decides on, fetched for all drafts of a request at
 * once — one embedder call for the statements and the entity names (`embedDrafts`), then one round trip
 * per kind of lookup (relate candidates, entity facts), the two in parallel (`gather`). Nothing here
 * decides anything. The embedding reads no graph, so it runs before the subjects' turn (subject-gate.ts)
 * and beside the wait for it; the lookups must see the graph the turn waited for, so they run in it.
 */

/** A request's drafts embedded: their statements' vectors, aligned with them, and their entity names'. */
export interface Embedded {
  readonly drafts: readonly Draft[];
  readonly vectors: ReadonlyArray<Float32Array | undefined>;
  readonly nameVectors: ReadonlyMap<string, Float32Array | undefined>;
}

/** One embedder call for the drafts' statements and the names of the entities they are about. */
export async function embedDrafts(
  d: { embedder: Embedder },
  drafts: readonly Draft[],
  times: StageTimes,
): Promise<Embedded> {
  const names = [...new Set(drafts.flatMap((dr) => dr.about.map(refName).filter(Boolean)))];
  const vectors = await times.time('embed', () => d.embedder.embed([...drafts.map(embedText), ...names]));
  const nameVectors = new Map(names.map((n, i) => [n, vectors[drafts.length + i]]));
  return { drafts, vectors: drafts.map((_, i) => vectors[i]), nameVectors };
}

/** The stored facts the embedded drafts are decided on: relate candidates and entity facts. */
export async function gather(
  d: { store: Pick<IngestLookups, 'relateCandidatesMany' | 'entityFacts'>; embedder: Embedder },
  scope: ReadScope,
  namespace: string,
  embedded: Embedded,
  times: StageTimes,
): Promise<PlanFacts> {
  const { drafts, vectors, nameVectors } = embedded;
  const relating = drafts.flatMap((dr, i) => (dr.class === OBSERVATION ? [] : [i]));
  const refs = new Map(drafts.flatMap((dr) => dr.about.map((ref) => [refKey(ref), ref] as const)));
  const [related, facts] = await times.time('lookup', () =>
    Promise.all([
      d.store.relateCandidatesMany(
        scope,
        namespace,
        relating.map((i) => ({
          subject: drafts[i]!.statement.subject,
          vector: arr(vectors[i]),
          modelId: d.embedder.modelId,
        })),
        RELATE_K,
      ),
      d.store.entityFacts(
        scope,
        [...refs.values()].map((ref) => ({
          ...ref,
          vector: arr(nameVectors.get(refName(ref))),
          modelId: d.embedder.modelId,
          defaultId: entityIdFor(scope.tenant, ref.type, refName(ref)),
        })),
      ),
    ]),
  );
  const relatedOf = new Map(relating.map((i, j) => [i, related[j] ?? []]));
  return {
    vectors,
    nameVectors,
    related: drafts.map((_, i) => relatedOf.get(i) ?? []),
    entities: new Map<string, EntityFacts>([...refs.keys()].map((k, j) => [k, facts[j]!])),
  };
}

const arr = (v: Float32Array | undefined): number[] | null => (v ? [...v] : null);
