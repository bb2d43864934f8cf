import { entityIdFor, type DecideContext, type EntityRef, type ResolvedEntity } from '../domain/commands.ts';
import { badInput } from '../domain/errors.ts';
import type { EmbeddingCache } from '../domain/events.ts';
import { mayMerge } from '../domain/identifiers.ts';
import type { CosineThresholds } from '../domain/similarity.ts';
import type { EntityFacts } from '../ports/ingest-lookups.ts';

/**
 * The decide step's entity part (plan.ts calls it per draft): each reference a draft is about resolves
 * to an existing entity or a new one, from the entity facts the gather step found. Pure, like plan.
 */

/** What resolving a request's references needs from the request. */
export interface EntityRequest {
  readonly ctx: DecideContext;
  /** The model that embedded the request's names. */
  readonly modelId: string;
  /** The writer's own entity for `ref` in this request, when an entity it may not see holds the default id. */
  readonly ownId: (ref: EntityRef) => string;
}

/** What the gather step found for the request's references. */
export interface EntityGathered {
  readonly nameVectors: ReadonlyMap<string, Float32Array | undefined>;
  /** Entity facts by `refKey`. */
  readonly entities: ReadonlyMap<string, EntityFacts>;
}

/** The name an entity reference is resolved and embedded by. */
export const refName = (ref: EntityRef): string => ref.alias ?? ref.externalId ?? '';

/** One reference's identity within a request: the same type, name and id resolve once. */
export const refKey = (ref: EntityRef): string =>
  `${ref.type ?? ''}\u0000${refName(ref).toLowerCase()}\u0000${ref.id ?? ''}`;

/** How an entity reference resolved: an existing entity, or a new one (its id when not the default). */
export interface Resolution {
  readonly existingId?: string;
  readonly newId?: string;
  readonly sameAs?: SameAs;
}

/** A tentative SAME_AS from a new entity to its nearest existing one, for review. */
type SameAs = { entityId: string; confidence: number };

export const embeddingCache = (modelId: string, v: Float32Array | undefined): EmbeddingCache | null =>
  v ? { modelId, vector: [...v] } : null;

/** A draft's entity references resolved (reusing and extending `resolvedSoFar`), with what new ones carry. */
export function resolveAbout(
  req: EntityRequest,
  about: readonly EntityRef[],
  facts: EntityGathered,
  resolvedSoFar: Map<string, Resolution>,
  th: CosineThresholds,
): {
  resolved: ResolvedEntity[];
  sameAs: Map<string, SameAs>;
  entityEmbeddings: Map<string, EmbeddingCache>;
} {
  const { ctx } = req;
  const resolved: ResolvedEntity[] = [];
  const sameAs = new Map<string, SameAs>();
  const entityEmbeddings = new Map<string, EmbeddingCache>();
  for (const ref of about) {
    const key = refKey(ref);
    const r =
      resolvedSoFar.get(key) ?? resolveEntity(ctx, ref, facts.entities.get(key), th, () => req.ownId(ref));
    resolvedSoFar.set(key, r);
    resolved.push({ ref, existingId: r.existingId, newId: r.newId });
    const name = refName(ref);
    if (!r.existingId && name) {
      const id = r.newId ?? entityIdFor(ctx.principal.tenant, ref.type, name);
      const v = embeddingCache(req.modelId, facts.nameVectors.get(name));
      if (v) entityEmbeddings.set(id, v);
      if (r.sameAs) sameAs.set(id, r.sameAs);
      // Later drafts in this request find the entity as existing.
      resolvedSoFar.set(key, { existingId: id });
    }
  }
  return { resolved, sameAs, entityEmbeddings };
}

/**
 * Resolve an entity reference among the entities the writer may see: exact id, external id or alias,
 * then the nearest neighbour; below the merge threshold a new entity with a tentative SAME_AS. An entity
 * the writer cannot see is never merged into, linked to or named, and an id it cannot see is refused
 * exactly like one that does not exist. A new entity's id is the deterministic one of (tenant, type,
 * name), so that writers converge — unless an entity the writer may not see already has it: creating
 * "the same" entity would merge into it and show the writer its aliases and external ids through the
 * writer's own record. The writer then gets an entity of its own, `ownId()` (one per request and name),
 * recorded in the event.
 */
export function resolveEntity(
  ctx: DecideContext,
  ref: EntityRef,
  facts: EntityFacts | undefined,
  th: Pick<CosineThresholds, 'entityMerge' | 'entitySameAs'>,
  ownId: () => string,
): Resolution {
  if (facts?.exact) return { existingId: facts.exact.id };
  if (ref.id) throw badInput(`no entity with id ${ref.id}`);
  const best = facts?.nearest ?? null;
  const sameType = !ref.type || !best?.type || ref.type === best.type;
  if (best && best.cosine >= th.entityMerge && sameType && mayMerge(refName(ref), best))
    return { existingId: best.id };
  const sameAs =
    best && best.cosine >= th.entitySameAs
      ? { sameAs: { entityId: best.id, confidence: Math.round(best.cosine * 1000) / 1000 } }
      : {};
  if (!facts?.defaultIdTaken) return sameAs;
  // A visible one the alias lookup missed (e.g. the type spelled in another case): converge on it.
  if (facts.defaultIdVisible)
    return { ...sameAs, existingId: entityIdFor(ctx.principal.tenant, ref.type, refName(ref)) };
  return { ...sameAs, newId: ownId() };
}
