import type { RecordView, RevisionView } from '../../ports/graph.ts';
import { approvalsOf, optStr, str, strings, taintOf, type Props } from './mapping.ts';

/*
 * Node properties → the views reads return (RecordView, RevisionView), and the fields recall reads for
 * them. Pure: no Cypher.
 */

/**
 * The Record properties `toRecordView` reads: recall projects exactly these (the node's other properties,
 * its ~3 KB embedding above all, are not read from the store). A unit test pins that the view reads no other.
 */
// prettier-ignore
export const RECORD_VIEW_FIELDS = [
  'tenant', 'id', 'namespace', 'class', 'status', 'version', 'subject', 'predicate', 'object', 'text',
  'sensitivity', 'confidence', 'validFrom', 'validTo', 'timeSource', 'recordedAt', 'createdAt',
  'changesetId', 'rationale', 'sourcesJson', 'extJson', 'proposedBy', 'proposedVia', 'approvalsJson',
  'approvedAt', 'reviewReasons', 'flags', 'reinforcements', 'utility', 'taintJson',
] as const;

/**
 * `RECORD_VIEW_FIELDS` as one Cypher list on the record `n`, and back: a list decodes in a third of the
 * driver's time of a map with the same fields (~1.0 against ~2.5 ms of this process for the ~90 records of
 * a recall, measured here), whose keys are decoded again for every record.
 */
export const RECORD_VIEW_LIST = `[${RECORD_VIEW_FIELDS.map((f) => `n.${f}`).join(', ')}]`;
export function viewProps(values: readonly unknown[]): Props {
  const p: Props = {};
  for (let i = 0; i < RECORD_VIEW_FIELDS.length; i++) p[RECORD_VIEW_FIELDS[i]!] = values[i] ?? null;
  return p;
}

export function toRecordView(n: Props, v: Props | null, about: string[]): RecordView {
  const cur = v ?? n;
  // As of a time: the class, label and namespace that revision had (stamped ones; older revisions have none).
  const was = (k: 'namespace' | 'class' | 'sensitivity') => optStr(v?.[k]) ?? str(n[k]);
  return {
    tenant: str(n['tenant']),
    id: str(n['id']),
    namespace: was('namespace'),
    class: was('class') as RecordView['class'],
    status: cur['status'] as RecordView['status'],
    version: Number(cur['version']),
    subject: str(cur['subject']),
    predicate: str(cur['predicate']),
    object: str(cur['object']),
    text: str(cur['text']),
    sensitivity: was('sensitivity') as RecordView['sensitivity'],
    confidence: Number(n['confidence']),
    validFrom: str(cur['validFrom']),
    validTo: optStr(cur['validTo']),
    timeSource: str(n['timeSource']),
    recordedAt: str(cur['recordedAt']),
    retiredAt: v ? optStr(v['retiredAt']) : null,
    createdAt: str(n['createdAt']),
    changesetId: optStr(cur['changesetId']),
    rationale: optStr(n['rationale']),
    about: [...about].sort(),
    sourcesJson: str(n['sourcesJson']),
    extJson: str(n['extJson']),
    proposedBy: str(n['proposedBy']),
    proposedVia: strings(n['proposedVia']),
    approvals: approvalsOf(n),
    approvedAt: optStr(n['approvedAt']),
    reviewReasons: (n['reviewReasons'] as string[] | undefined) ?? [],
    flags: (n['flags'] as string[] | undefined) ?? [],
    reinforcements: Number(n['reinforcements'] ?? 0),
    utility: Number(n['utility'] ?? 0),
    taint: taintOf(n),
  };
}

export function toRevisionView(v: Props): RevisionView {
  return {
    version: Number(v['version']),
    subject: str(v['subject']),
    predicate: str(v['predicate']),
    object: str(v['object']),
    text: str(v['text']),
    status: v['status'] as RevisionView['status'],
    validFrom: str(v['validFrom']),
    validTo: optStr(v['validTo']),
    recordedAt: str(v['recordedAt']),
    retiredAt: optStr(v['retiredAt']),
    changesetId: optStr(v['changesetId']),
    reason: optStr(v['reason']),
  };
}
