import type { Record as Neo4jRecord } from 'neo4j-driver';
import { canonicalJson } from '../../domain/canonical.ts';
import type {
  EntityState,
  EpisodeState,
  GrantState,
  Receipt,
  RecordState,
  RelationState,
  RevisionState,
  TaintState,
  HoldState,
  FindingState,
} from '../../domain/fold.ts';
import { ROLLBACK_REVIEW_FLAG, TAINTED_FLAG } from '../../domain/rollback-fold.ts';
import { currentRevision, utilityOf } from '../../domain/fold.ts';
import type { LexicalCandidate } from '../../domain/lexical-terms.ts';
import type { Sensitivity } from '../../domain/model.ts';
import type { Approval } from '../../domain/review.ts';
import { RelateTypes } from '../../domain/relations.ts';
import { TURN_CONTEXT_EXT } from '../../domain/turn-context.ts';
import { scopeTerms } from './scope.ts';
import { subjectKeyOf } from '../../domain/subject-key.ts';

/*
 * Rows ↔ state: what the projection writes from folded state (recordRow, episodeRow, relationProps) and
 * what the reads rebuild from node properties (toRecordState, toEntity, …; the read views are
 * view-mapping.ts). Pure: no Cypher.
 */

/** A lexical candidate sent as a list (cheaper to decode than a map): `[n.id, n.subject, n.text, n.context, n.validFrom]`. */
export const LEXICAL_LIST = '[n.id, n.subject, n.text, n.context, n.validFrom]';
export const lexicalFromList = ([
  id,
  subject,
  text,
  context,
  validFrom,
]: readonly unknown[]): LexicalCandidate => lexicalCandidate({ id, subject, text, context, validFrom });

export const lexicalCandidate = (r: Record<string, unknown>): LexicalCandidate => ({
  id: String(r['id']),
  subject: String(r['subject']),
  text: String(r['text']),
  context: optStr(r['context']),
  validFrom: String(r['validFrom']),
});

/** Every type a record's relation may have (the pipeline's and `relate`'s), in a stable order. */
export const RELATION_TYPES = ['CONTRADICTS', 'SUPERSEDES', ...RelateTypes] as const satisfies ReadonlyArray<
  RelationState['type']
>;

/** An edge's properties; validity only on `relate` edges (the pipeline's hold always). */
export const relationProps = (x: RelationState) => ({
  confidence: x.confidence,
  reason: x.reason,
  eventId: x.eventId,
  recordedAt: x.recordedAt,
  ...(x.validFrom === undefined ? {} : { validFrom: x.validFrom, validTo: x.validTo ?? null }),
});

/** A relation as loaded back (rows of projection-store's load): the inverse of relationProps. */
export const toRelationState = (x: { type: string; target: string; kind: string; props: Props }) => ({
  type: x.type as RelationState['type'],
  target: x.target,
  confidence: Number(x.props['confidence']),
  reason: str(x.props['reason']),
  eventId: str(x.props['eventId']),
  recordedAt: str(x.props['recordedAt']),
  ...(x.kind === 'ENTITY' ? { targetKind: 'ENTITY' as const } : {}),
  ...(x.props['validFrom'] === undefined || x.props['validFrom'] === null
    ? {}
    : { validFrom: str(x.props['validFrom']), validTo: optStr(x.props['validTo']) }),
});

export function episodeRow(e: EpisodeState) {
  return {
    tenant: e.tenant,
    id: e.id,
    chunks: e.chunks.map((c) => ({ ...c })),
    props: {
      namespace: e.namespace,
      source: e.source,
      occurredAt: e.occurredAt,
      text: e.text,
      turnsJson: canonicalJson(e.turns),
      chunksJson: canonicalJson(e.chunks),
      sensitivity: e.sensitivity,
      secretRefsJson: canonicalJson(e.secretRefs),
      flags: [...e.flags],
      recordedAt: e.recordedAt,
    },
  };
}

export function toEpisode(p: Props): EpisodeState {
  return {
    tenant: str(p['tenant']),
    id: str(p['id']),
    namespace: str(p['namespace']),
    source: str(p['source']),
    occurredAt: str(p['occurredAt']),
    text: str(p['text']),
    turns: JSON.parse(str(p['turnsJson'])) as EpisodeState['turns'],
    chunks: JSON.parse(str(p['chunksJson'])) as EpisodeState['chunks'],
    sensitivity: p['sensitivity'] as EpisodeState['sensitivity'],
    secretRefs: JSON.parse(str(p['secretRefsJson'])) as EpisodeState['secretRefs'],
    flags: (p['flags'] as string[] | undefined) ?? [],
    recordedAt: str(p['recordedAt']),
  };
}

/** A RevisionState → its Revision node's properties. */
const revisionRow = (v: RevisionState) => ({
  version: v.version,
  subject: v.statement.subject,
  predicate: v.statement.predicate,
  object: v.statement.object,
  text: v.statement.text,
  status: v.status,
  validFrom: v.validFrom,
  validTo: v.validTo,
  recordedAt: v.recordedAt,
  retiredAt: v.retiredAt,
  changesetId: v.changesetId,
  eventId: v.eventId,
  reason: v.reason,
  by: v.by ?? null,
  cause: v.cause ?? null,
  class: v.classification?.class ?? null,
  sensitivity: v.classification?.sensitivity ?? null,
  namespace: v.classification?.namespace ?? null,
});

/** RecordState → the Record node's properties (current revision denormalized) and its revisions, but `unchanged`. */
export function recordRow(r: RecordState, unchanged?: ReadonlySet<number>) {
  const cur = currentRevision(r);
  return {
    tenant: r.tenant,
    id: r.id,
    about: [...r.about],
    props: {
      namespace: r.namespace,
      class: r.class,
      sensitivity: r.sensitivity,
      confidence: r.confidence,
      timeSource: r.timeSource,
      rationale: r.rationale,
      sourcesJson: canonicalJson(r.sources),
      extJson: canonicalJson(r.ext),
      createdAt: r.createdAt,
      proposedBy: r.proposedBy,
      proposedVia: [...r.proposedVia],
      approvalsJson: canonicalJson(r.approvals),
      approvedAt: r.approvedAt,
      approvedBy: r.approvedAt ? r.approvals.map((a) => a.by) : [],
      aboutIds: [...r.about],
      status: cur.status,
      version: cur.version,
      subject: cur.statement.subject,
      predicate: cur.statement.predicate,
      object: cur.statement.object,
      text: cur.statement.text,
      validFrom: cur.validFrom,
      validTo: cur.validTo,
      recordedAt: cur.recordedAt,
      changesetId: cur.changesetId,
      subjectKey: subjectKeyOf(cur.statement.subject),
      reviewReasons: [...r.reviewReasons],
      flags: [...r.flags],
      embedding: r.embedding?.vector ?? null,
      embeddingModel: r.embedding?.modelId ?? null,
      episodeId: r.episodeId,
      context: typeof r.ext[TURN_CONTEXT_EXT] === 'string' ? r.ext[TURN_CONTEXT_EXT] : null,
      scopeTerms: scopeTerms(r.tenant, r.namespace),
      reinforcements: r.reinforcements,
      feedbackUsed: r.feedback.used,
      feedbackIgnored: r.feedback.ignored,
      feedbackWrong: r.feedback.wrong,
      utility: utilityOf(r.feedback),
      feedbackVotesJson: canonicalJson(r.votes),
      derivedFromIds: [...(r.derivedFrom ?? [])],
      taintJson: r.taint ? canonicalJson(r.taint) : null,
      // The review queue lists these beside the proposals (a taint, or a rollback that would overwrite a person).
      needsReview: r.flags.includes(TAINTED_FLAG) || r.flags.includes(ROLLBACK_REVIEW_FLAG),
    },
    revisions: (unchanged ? r.revisions.filter((v) => !unchanged.has(v.version)) : r.revisions).map(
      revisionRow,
    ),
  };
}

export type Props = Record<string, unknown>;
export const str = (v: unknown): string => String(v);
export const optStr = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
export const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);
/** Records projected before approvals were kept have none. */
export const approvalsOf = (n: Props): Approval[] =>
  n['approvalsJson'] ? (JSON.parse(str(n['approvalsJson'])) as Approval[]) : [];

/** The taint a rollback set on a record (rollback-fold.ts); null when none. */
export const taintOf = (n: Props): TaintState | null =>
  n['taintJson'] ? (JSON.parse(str(n['taintJson'])) as TaintState) : null;

/** A Revision node's properties → its RevisionState. */
const toRevisionState = (v: Props): RevisionState => ({
  version: Number(v['version']),
  statement: {
    subject: str(v['subject']),
    predicate: str(v['predicate']),
    object: str(v['object']),
    text: str(v['text']),
  },
  status: v['status'] as RevisionState['status'],
  validFrom: str(v['validFrom']),
  validTo: optStr(v['validTo']),
  recordedAt: str(v['recordedAt']),
  retiredAt: optStr(v['retiredAt']),
  changesetId: optStr(v['changesetId']),
  eventId: str(v['eventId']),
  reason: optStr(v['reason']),
  by: optStr(v['by']),
  cause: optStr(v['cause']),
  classification: classificationOf(v),
});

/** The revision's stamped class, label and namespace; null on revisions projected before they were. */
function classificationOf(v: Props): RevisionState['classification'] {
  const [cls, sensitivity, namespace] = [
    optStr(v['class']),
    optStr(v['sensitivity']),
    optStr(v['namespace']),
  ];
  if (cls === null || sensitivity === null || namespace === null) return null;
  return {
    class: cls as RecordState['class'],
    sensitivity: sensitivity as RecordState['sensitivity'],
    namespace,
  };
}

export function toRecordState(row: Neo4jRecord): RecordState {
  const n = row.get('n').properties as Props;
  const vs = (row.get('vs') as Array<{ properties: Props }>).map((v) => v.properties);
  const revisions = vs.map(toRevisionState);
  return {
    tenant: str(n['tenant']),
    id: str(n['id']),
    namespace: str(n['namespace']),
    class: n['class'] as RecordState['class'],
    sensitivity: n['sensitivity'] as RecordState['sensitivity'],
    confidence: Number(n['confidence']),
    timeSource: n['timeSource'] as RecordState['timeSource'],
    rationale: optStr(n['rationale']),
    about: (n['aboutIds'] as string[] | undefined) ?? [],
    sources: JSON.parse(str(n['sourcesJson'])) as RecordState['sources'],
    ext: JSON.parse(str(n['extJson'])) as RecordState['ext'],
    createdAt: str(n['createdAt']),
    proposedBy: str(n['proposedBy']),
    proposedVia: strings(n['proposedVia']),
    approvals: approvalsOf(n),
    approvedAt: optStr(n['approvedAt']),
    revisions,
    relations: (row.get('rels') as Array<{ type: string; target: string; kind: string; props: Props }>).map(
      toRelationState,
    ),
    reviewReasons: (n['reviewReasons'] as string[] | undefined) ?? [],
    flags: (n['flags'] as string[] | undefined) ?? [],
    embedding: n['embedding']
      ? { modelId: str(n['embeddingModel']), vector: (n['embedding'] as number[]).map(Number) }
      : null,
    episodeId: optStr(n['episodeId']),
    reinforcements: Number(n['reinforcements'] ?? 0),
    feedback: {
      used: Number(n['feedbackUsed'] ?? 0),
      ignored: Number(n['feedbackIgnored'] ?? 0),
      wrong: Number(n['feedbackWrong'] ?? 0),
    },
    // Projected before votes were kept: the counts stay, with no caller to replace.
    votes: n['feedbackVotesJson'] ? (JSON.parse(str(n['feedbackVotesJson'])) as RecordState['votes']) : {},
    derivedFrom: strings(n['derivedFromIds']),
    taint: taintOf(n),
  };
}

export function toHold(p: Props): HoldState {
  return {
    tenant: str(p['tenant']),
    id: str(p['id']),
    target: p['target'] as HoldState['target'],
    namespace: str(p['namespace']),
    recordId: optStr(p['recordId']),
    reason: str(p['reason']),
    placedBy: str(p['placedBy']),
    placedAt: str(p['placedAt']),
    releasedAt: optStr(p['releasedAt']),
    releasedBy: optStr(p['releasedBy']),
    releaseReason: optStr(p['releaseReason']),
  };
}

export function toGrant(p: Props): GrantState {
  return {
    tenant: str(p['tenant']),
    id: str(p['id']),
    grantee: str(p['grantee']),
    namespace: str(p['namespace']),
    maxSensitivity: p['maxSensitivity'] as Sensitivity,
    purposes: (p['purposes'] as string[] | null | undefined) ?? null,
    grantedBy: str(p['grantedBy']),
    grantedAt: str(p['grantedAt']),
    revokedAt: optStr(p['revokedAt']),
    revokeReason: optStr(p['revokeReason']),
    // Grants projected before roles existed only gave access.
    role: (optStr(p['role']) ?? 'READER') as GrantState['role'],
  };
}

export function toFinding(p: Props): FindingState {
  return {
    tenant: str(p['tenant']),
    id: str(p['id']),
    type: p['type'] as FindingState['type'],
    severity: p['severity'] as FindingState['severity'],
    namespace: str(p['namespace']),
    recordIds: strings(p['recordIds']),
    entityIds: strings(p['entityIds']),
    reason: str(p['reason']),
    raisedAt: str(p['raisedAt']),
    raised: Number(p['raised']),
    resolvedAt: optStr(p['resolvedAt']),
    resolvedBy: optStr(p['resolvedBy']),
    resolveReason: optStr(p['resolveReason']),
    dismissed: p['dismissed'] === true,
  };
}

export function toEntity(p: Props, sameAs: EntityState['sameAs'] = null): EntityState {
  return {
    tenant: str(p['tenant']),
    id: str(p['id']),
    name: str(p['name']),
    type: optStr(p['type']),
    aliases: (p['aliases'] as string[] | undefined) ?? [],
    externalIds: (p['externalIds'] as string[] | undefined) ?? [],
    sameAs,
    embedding: p['embedding']
      ? { modelId: str(p['embeddingModel']), vector: (p['embedding'] as number[]).map(Number) }
      : null,
  };
}

export function toReceipt(p: Props): Receipt {
  return {
    tenant: str(p['tenant']),
    idempotencyKey: str(p['idempotencyKey']),
    commandHash: str(p['commandHash']),
    eventId: str(p['eventId']),
    outcome: p['outcome'] as Receipt['outcome'],
    recordId: optStr(p['recordId']),
    version: p['version'] === null || p['version'] === undefined ? null : Number(p['version']),
    reason: optStr(p['reason']),
    recordedAt: str(p['recordedAt']),
  };
}
