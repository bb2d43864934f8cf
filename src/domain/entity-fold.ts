import type { EventOf } from './events.ts';
import type { Effect, EntityState, EpisodeState, ProjectionView } from './projection-state.ts';
import { receiptOf } from './receipts.ts';

/** The nodes records are about and drawn from: entities and episodes. */

export function entityCreated(view: ProjectionView, e: EventOf<'EntityCreated'>): Effect {
  const p = e.payload;
  const existing = view.entity(e.tenant, p.entityId);
  // Entity ids are UUIDv5 of (tenant, type, name): two writers creating the same entity converge.
  const entity: EntityState = existing
    ? {
        ...existing,
        aliases: union(existing.aliases, p.aliases),
        externalIds: union(existing.externalIds, p.externalIds),
        embedding: existing.embedding ?? p.embedding,
      }
    : {
        tenant: e.tenant,
        id: p.entityId,
        name: p.name,
        type: p.type,
        aliases: union([], p.aliases),
        externalIds: union([], p.externalIds),
        sameAs:
          p.sameAs && p.sameAs.entityId !== p.entityId && view.entity(e.tenant, p.sameAs.entityId)
            ? p.sameAs
            : null,
        embedding: p.embedding,
      };
  return { entity, receipt: receiptOf(e, 'ADMITTED', null, null, null) };
}

const union = (a: readonly string[], b: readonly string[]): string[] => [...new Set([...a, ...b])].sort();

export function episodeStored(view: ProjectionView, e: EventOf<'EpisodeStored'>): Effect {
  const p = e.payload;
  if (view.episode(e.tenant, p.episodeId)) {
    return { receipt: receiptOf(e, 'DUPLICATE', null, null, 'episode already stored') };
  }
  const episode: EpisodeState = {
    tenant: e.tenant,
    id: p.episodeId,
    namespace: e.namespace,
    source: p.source,
    occurredAt: p.occurredAt,
    text: p.text,
    turns: p.turns,
    chunks: p.chunks,
    sensitivity: p.sensitivity,
    secretRefs: p.secretRefs,
    flags: p.flags,
    recordedAt: e.recordedAt,
  };
  return { episode, receipt: receiptOf(e, 'ADMITTED', null, null, null) };
}
