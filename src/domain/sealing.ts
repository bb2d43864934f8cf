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

/** The clear payload with its opened personal fields put back (the inverse of `split`). */
export function merge(clear: Raw, secret: Raw): Raw {
  const { relationReason, ...rest } = secret;
  const out: Raw = { ...clear, ...rest };
  if (typeof relationReason === 'string' && out['relation'] && typeof out['relation'] === 'object')
    out['relation'] = { ...(out['relation'] as Raw), reason: relationReason };
  return out;
}
