import type { EventOf } from './events.ts';
import type {
  Effect,
  EntityState,
  EpisodeState,
  ProjectionView,
  Receipt,
  RecordState,
} from './projection-state.ts';
import { receiptOf } from './receipts.ts';
import { ERASED_MARK } from './sealing.ts';

/**
 * The fold of an `Erased` tombstone. It overwrites every field that sealing.ts seals with the same marker a
 * replay without the key already sees, and drops what was derived from them (embeddings, spans, relation
 * reasons, approvals of the text), so the erased item's state is the same whether its events were read
 * in plaintext (live) or with their key gone (rebuild). Structure stays: ids, versions, statuses,
 * validity, relations' kinds and targets. A record gets a last revision with status ERASED.
 */
export function erased(view: ProjectionView, e: EventOf<'Erased'>): Effect {
  const p = e.payload;
  const erasure = { tenant: e.tenant, target: p.target, id: p.id } as const;
  // Ids only: an erasure retried with the same key resumes from these receipts (lifecycle/erasure.ts).
  const done = `erased ${p.target} ${p.id} in ${e.namespace}`;
  if (p.target === 'ENTITY') {
    const ent = view.entity(e.tenant, p.id);
    if (!ent) return { receipt: receiptOf(e, 'REJECTED', null, null, 'entity not found') };
    return { entity: scrubEntity(ent), erasure, receipt: receiptOf(e, 'ERASED', null, null, done) };
  }
  if (p.target === 'EPISODE') {
    const ep = view.episode(e.tenant, p.id);
    if (!ep) return { receipt: receiptOf(e, 'REJECTED', null, null, 'episode not found') };
    return { episode: scrubEpisode(ep), erasure, receipt: receiptOf(e, 'ERASED', null, null, done) };
  }
  const r = view.record(e.tenant, p.id);
  if (!r) return { receipt: receiptOf(e, 'REJECTED', p.id, null, 'record not found') };
  const cur = r.revisions[r.revisions.length - 1]!;
  if (cur.status === 'ERASED') return { receipt: receiptOf(e, 'DUPLICATE', p.id, null, done) };
  const record = scrubRecord(r, e);
  return { record, erasure, receipt: receiptOf(e, 'ERASED', p.id, cur.version + 1, done) };
}

function scrubRecord(r: RecordState, e: EventOf<'Erased'>): RecordState {
  const statement = { subject: ERASED_MARK, predicate: ERASED_MARK, object: ERASED_MARK, text: ERASED_MARK };
  const revisions = r.revisions.map((v, i) => ({
    ...v,
    statement,
    reason: null,
    retiredAt: i === r.revisions.length - 1 ? e.recordedAt : v.retiredAt,
  }));
  const cur = revisions[revisions.length - 1]!;
  return {
    ...r,
    rationale: null,
    sources: [],
    ext: {},
    embedding: null,
    approvals: [],
    approvedAt: null,
    relations: r.relations.map((x) => ({ ...x, reason: '' })),
    revisions: [
      ...revisions,
      {
        ...cur,
        version: cur.version + 1,
        status: 'ERASED',
        recordedAt: e.recordedAt,
        retiredAt: null,
        changesetId: e.changesetId,
        eventId: e.eventId,
        reason: `erased: ${e.payload.reason}`,
      },
    ],
  };
}

const scrubEntity = (x: EntityState): EntityState => ({
  ...x,
  name: ERASED_MARK,
  aliases: [],
  externalIds: [],
  embedding: null,
});

const scrubEpisode = (x: EpisodeState): EpisodeState => ({
  ...x,
  text: '',
  turns: x.turns.map((t) => ({ ...t, speaker: null, label: null })),
});

/** A receipt whose reason no longer quotes erased content (see Effect.erasure). */
export const scrubbedReceipt = (r: Receipt): Receipt => ({ ...r, reason: null });
