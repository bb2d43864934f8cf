import type { EventOf, LedgerEvent } from './events.ts';

/**
 * Which part of an event is personal data, and whose data key seals it (crypto-shredding).
 *
 * Keys are per record, per entity and per episode — the units `erase` removes — never per event: every
 * event about record R is sealed under R's key, so destroying that one key makes all of R's history
 * unreadable at once, while a subject's erasure destroys exactly the keys of the records, entities and
 * episodes about that subject and nothing else.
 *
 * `split` returns the payload with each personal field replaced by a fixed marker (what travels in clear)
 * and the personal fields themselves (what is sealed). Everything the fold decides on — ids, versions,
 * statuses, relation kinds and targets, validity, labels, namespaces — stays in clear, so a replay whose
 * keys are gone takes the same decisions and only the marked fields differ; the `Erased` tombstone then
 * overwrites those with the same markers, and live state and replay hash equal.
 */
export const ERASED_MARK = '[erased]';

const ERASED_STATEMENT = {
  subject: ERASED_MARK,
  predicate: ERASED_MARK,
  object: ERASED_MARK,
  text: ERASED_MARK,
};

type Raw = Record<string, unknown>;

export interface Split {
  readonly keyId: string;
  /** The payload as it travels in clear: personal fields replaced by markers. */
  readonly clear: Raw;
  /** The personal fields, sealed under `keyId`. */
  readonly secret: Raw;
}

/** The data key of a record, an entity or an episode. Ids only: a key id never carries content. */
export const keyIdOf = (tenant: string, kind: 'record' | 'entity' | 'episode', id: string): string =>
  `${tenant}/${kind}/${id}`;

/** The personal part of an event and the key that seals it; null for events that carry none. */
export function split(e: LedgerEvent): Split | null {
  switch (e.type) {
    case 'RecordProposed':
      return recordProposed(e);
    case 'RecordRevised': {
      // The writer's reason for a reclassification may quote the content: sealed with the statement.
      const { statement, embedding, reason } = e.payload;
      const mark = reason === null ? null : ERASED_MARK;
      return rec(e, { statement, embedding, reason }, { statement: null, embedding: null, reason: mark });
    }
    case 'RecordRetracted':
    case 'ProposalRejected':
    case 'RecordRelated':
      return rec(e, { reason: e.payload.reason }, { reason: ERASED_MARK });
    case 'RecordReinforced': {
      const { sources, reason } = e.payload;
      return rec(e, { sources, reason }, { sources: [], reason: '' });
    }
    case 'EntityCreated': {
      const { name, aliases, externalIds, embedding } = e.payload;
      return {
        keyId: keyIdOf(e.tenant, 'entity', e.payload.entityId),
        clear: { ...e.payload, name: ERASED_MARK, aliases: [], externalIds: [], embedding: null },
        secret: { name, aliases, externalIds, embedding },
      };
    }
    case 'EpisodeStored':
      return episodeStored(e);
    default:
      return null;
  }
}

function rec(e: LedgerEvent & { payload: { recordId: string } }, secret: Raw, marks: Raw): Split {
  return {
    keyId: keyIdOf(e.tenant, 'record', e.payload.recordId),
    clear: { ...e.payload, ...marks },
    secret,
  };
}

function recordProposed(e: EventOf<'RecordProposed'>): Split {
  const p = e.payload;
  const secret: Raw = {
    statement: p.statement,
    rationale: p.rationale,
    sources: p.sources,
    ext: p.ext,
    embedding: p.embedding,
    relationReason: p.relation?.reason ?? null,
  };
  const clear: Raw = {
    ...p,
    statement: ERASED_STATEMENT,
    rationale: null,
    sources: [],
    ext: {},
    embedding: null,
    relation: p.relation ? { ...p.relation, reason: '' } : null,
  };
  return { keyId: keyIdOf(e.tenant, 'record', p.recordId), clear, secret };
}

function episodeStored(e: EventOf<'EpisodeStored'>): Split {
  const p = e.payload;
  return {
    keyId: keyIdOf(e.tenant, 'episode', p.episodeId),
    clear: { ...p, text: '', turns: p.turns.map((t) => ({ ...t, speaker: null, label: null })) },
    secret: { text: p.text, turns: p.turns },
  };
}

/** One sealed part of an event that concerns several items, and the key of its item. */
export interface Part {
  readonly keyId: string;
  readonly secret: Raw;
}

/**
 * The personal parts of an event that concerns several items, each sealed under its own item's key; null
 * for events about one item (`split`). A rollback is one: each compensation restores a record's earlier
 * words (and their vector), which belong to that record and must go when its key goes, as its own
 * events' words do. The part names its compensation by index; everything the fold decides on stays in
 * clear, so a replay whose key is gone restores the marker, which the `Erased` tombstone writes anyway.
 */
export function splitParts(e: LedgerEvent): { clear: Raw; parts: Part[] } | null {
  if (e.type !== 'RolledBack') return null;
  const parts: Part[] = [];
  const compensations = e.payload.compensations.map((c, i) => {
    if (!c.target) return c;
    const keyId = keyIdOf(e.tenant, 'record', c.recordId);
    const { statement, embedding } = c.target;
    parts.push({ keyId, secret: { compensation: i, statement, embedding } });
    return { ...c, target: { ...c.target, statement: ERASED_STATEMENT, embedding: null } };
  });
  return parts.length ? { clear: { ...e.payload, compensations }, parts } : null;
}

/** The key ids a clear payload's parts must carry, in order: one per compensation that restores words. */
export function partKeys(tenant: string, clear: Raw): string[] {
  const list = clear['compensations'];
  if (!Array.isArray(list)) return [];
  return (list as Array<{ recordId?: unknown; target?: unknown }>).flatMap((c) =>
    c.target && typeof c.recordId === 'string' ? [keyIdOf(tenant, 'record', c.recordId)] : [],
  );
}

/**
 * A clear payload with one opened part put back (the inverse of `splitParts`), or null when the part does
 * not belong where it says: its compensation is not there, restores nothing, or is not its key's record.
 */
export function mergePart(tenant: string, clear: Raw, part: Part): Raw | null {
  const i = part.secret['compensation'];
  const list = clear['compensations'];
  if (typeof i !== 'number' || !Array.isArray(list)) return null;
  const c = list[i] as { recordId?: unknown; target?: Raw | null } | undefined;
  if (!c?.target || typeof c.recordId !== 'string') return null;
  if (keyIdOf(tenant, 'record', c.recordId) !== part.keyId) return null;
  const compensations = [...list];
  const { statement, embedding = null } = part.secret;
  compensations[i] = { ...c, target: { ...c.target, statement, embedding } };
  return { ...clear, compensations };
}

/** The clear payload with its opened personal fields put back (the inverse of `split`). */
export function merge(clear: Raw, secret: Raw): Raw {
  const { relationReason, ...rest } = secret;
  const out: Raw = { ...clear, ...rest };
  if (typeof relationReason === 'string' && out['relation'] && typeof out['relation'] === 'object')
    out['relation'] = { ...(out['relation'] as Raw), reason: relationReason };
  return out;
}
