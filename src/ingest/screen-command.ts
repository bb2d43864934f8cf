/**
 * Screening of whole commands: ONE pass over every field of a write command, driven by the table below,
 * before anything else reads the command (the policy check, the idempotency lookup, the command hash, a log
 * line, an error message). The table mirrors the input types of schema.graphql's Mutation; a unit test
 * walks the schema and fails when a field is missing here, or listed here and gone there.
 *
 * How a field is screened (its rule):
 *  - `text`   free text. Secrets become `[secret:<kind>:<fingerprint>]` refs; PII and instruction-shaped
 *             text become flags and raise the label floor of what the command stores.
 *  - `name`   an identifier that becomes visible content (entity names, a turn's speaker and label, a
 *             source's label): a refs-for-secrets rewrite would silently rename it, so a secret REFUSES
 *             the command (BAD_USER_INPUT naming the field and the kind, never the value). PII and
 *             instruction-shaped text count like in `text`; the value is kept as given.
 *  - `key`    a plumbing identifier (namespace, purpose, idempotency and changeset keys, ids, roles,
 *             grantees): a secret refuses the command; nothing else is read from it.
 *  - `json`   domain extensions: every string value is `text`, every object key (at any depth) is `name`.
 *  - `opaque` not free text: enums, numbers, booleans, instants (validated by format before this runs),
 *             and the feedback handle and recall id, which are refused unless their MAC verifies.
 *  - `{ input }` a nested input object (or a list of them), screened by its own row.
 * A field the table does not know (a server-side default of the command schema) is screened as `key`.
 */
import { badInput } from '../domain/errors.ts';
import { highWaterMark } from './assess.ts';
import { screen, type LabelFloor, type ScreenResult } from './screen.ts';

export type InputTypeName =
  | 'ProposeInput'
  | 'ReviseInput'
  | 'RelateInput'
  | 'RetractInput'
  | 'EpisodeInput'
  | 'ApproveInput'
  | 'RejectInput'
  | 'FeedbackInput'
  | 'GrantAccessInput'
  | 'RevokeAccessInput'
  | 'StatementInput'
  | 'SourceSpanInput'
  | 'EntityRefInput'
  | 'TurnInput'
  | 'PrincipalRefInput'
  | 'EraseInput'
  | 'EraseSubjectInput'
  | 'PlaceHoldInput'
  | 'ReleaseHoldInput'
  | 'RollbackInput'
  | 'DismissFindingInput';

export type FieldRule = 'text' | 'name' | 'key' | 'json' | 'opaque' | { readonly input: InputTypeName };

/** Every field of every input type a mutation takes, and how it is screened. */
export const SCREENING: Readonly<Record<InputTypeName, Readonly<Record<string, FieldRule>>>> = {
  ProposeInput: {
    namespace: 'key',
    class: 'opaque',
    statement: { input: 'StatementInput' },
    about: { input: 'EntityRefInput' },
    sources: { input: 'SourceSpanInput' },
    validFrom: 'opaque',
    validTo: 'opaque',
    sensitivity: 'opaque',
    rationale: 'text',
    purpose: 'key',
    idempotencyKey: 'key',
    changesetId: 'key',
    derivedFrom: 'key',
    ext: 'json',
    await: 'opaque',
  },
  ReviseInput: {
    id: 'key',
    expectedVersion: 'opaque',
    statement: { input: 'StatementInput' },
    validFrom: 'opaque',
    validTo: 'opaque',
    class: 'opaque',
    sensitivity: 'opaque',
    namespace: 'key',
    reason: 'text',
    purpose: 'key',
    idempotencyKey: 'key',
    changesetId: 'key',
    await: 'opaque',
  },
  RelateInput: {
    from: 'key',
    to: 'key',
    targetKind: 'opaque',
    type: 'opaque',
    confidence: 'opaque',
    validFrom: 'opaque',
    validTo: 'opaque',
    reason: 'text',
    purpose: 'key',
    idempotencyKey: 'key',
    changesetId: 'key',
    await: 'opaque',
  },
  RetractInput: {
    id: 'key',
    expectedVersion: 'opaque',
    reason: 'text',
    idempotencyKey: 'key',
    changesetId: 'key',
    await: 'opaque',
  },
  EpisodeInput: {
    namespace: 'key',
    source: 'key',
    occurredAt: 'opaque',
    turns: { input: 'TurnInput' },
    purpose: 'key',
    idempotencyKey: 'key',
    changesetId: 'key',
    sensitivity: 'opaque',
    review: 'opaque',
    await: 'opaque',
  },
  ApproveInput: { proposalId: 'key', expectedVersion: 'opaque', idempotencyKey: 'key', await: 'opaque' },
  RejectInput: {
    proposalId: 'key',
    reason: 'text',
    expectedVersion: 'opaque',
    idempotencyKey: 'key',
    await: 'opaque',
  },
  FeedbackInput: { recallId: 'opaque', handle: 'opaque', verdict: 'opaque', purpose: 'key', await: 'opaque' },
  GrantAccessInput: {
    grantee: { input: 'PrincipalRefInput' },
    namespace: 'key',
    maxSensitivity: 'opaque',
    purposes: 'key',
    role: 'opaque',
    reason: 'text',
    idempotencyKey: 'key',
    await: 'opaque',
  },
  RevokeAccessInput: { grantId: 'key', reason: 'text', idempotencyKey: 'key', await: 'opaque' },
  StatementInput: { subject: 'text', predicate: 'text', object: 'text', text: 'text' },
  SourceSpanInput: { episodeId: 'key', start: 'opaque', end: 'opaque', label: 'name' },
  EntityRefInput: { id: 'key', alias: 'name', externalId: 'name', type: 'name' },
  TurnInput: { role: 'key', speaker: 'name', text: 'text', label: 'name' },
  PrincipalRefInput: { iss: 'key', sub: 'key' },
  // The approver's bearer token is verified, never stored or logged: not free text.
  EraseInput: {
    subject: { input: 'EraseSubjectInput' },
    recordId: 'key',
    namespace: 'key',
    reason: 'text',
    idempotencyKey: 'key',
    approverToken: 'opaque',
  },
  EraseSubjectInput: { id: 'key', alias: 'name', externalId: 'name' },
  PlaceHoldInput: { namespace: 'key', recordId: 'key', reason: 'text', idempotencyKey: 'key' },
  ReleaseHoldInput: { holdId: 'key', reason: 'text', idempotencyKey: 'key' },
  RollbackInput: {
    eventId: 'key',
    changesetId: 'key',
    namespace: 'key',
    to: 'opaque',
    reason: 'text',
    idempotencyKey: 'key',
    await: 'opaque',
  },
  DismissFindingInput: { id: 'key', reason: 'text', idempotencyKey: 'key', await: 'opaque' },
};

/** The mutation each command answers, and its input type. */
export const COMMAND_INPUTS = {
  propose: 'ProposeInput',
  revise: 'ReviseInput',
  retract: 'RetractInput',
  ingestEpisode: 'EpisodeInput',
  approve: 'ApproveInput',
  reject: 'RejectInput',
  feedback: 'FeedbackInput',
  grantAccess: 'GrantAccessInput',
  revokeAccess: 'RevokeAccessInput',
  erase: 'EraseInput',
  placeHold: 'PlaceHoldInput',
  releaseHold: 'ReleaseHoldInput',
  relate: 'RelateInput',
  rollback: 'RollbackInput',
  dismissFinding: 'DismissFindingInput',
} as const satisfies Record<string, InputTypeName>;
export type CommandName = keyof typeof COMMAND_INPUTS;

export interface ScreenedCommand<T> {
  /** The command with every `text` field redacted (same shape; `name` and `key` fields as given). */
  readonly value: T;
  /** The screen of every `text` and `name` field, by path: "statement.text", "turns.2.speaker", "ext.a:b". */
  readonly fields: ReadonlyMap<string, ScreenResult>;
}

/** What the fields at or under a path found, together. */
export interface Findings {
  readonly labelFloor: LabelFloor;
  /** `secret:<kind>`, `pii:<kind>`, `injection:<kind>`; unique, sorted. */
  readonly reasons: string[];
  readonly secretRefs: Array<{ ref: string; kind: string }>;
}

/** JSON deeper than this is refused (the walk is recursive). */
const MAX_JSON_DEPTH = 32;

interface Walk {
  readonly fingerprintKey: string;
  readonly fields: Map<string, ScreenResult>;
}

/**
 * Screen `cmd` (already validated by its schema) as the input of `command`. Throws BAD_USER_INPUT when a
 * `name` or `key` field holds a secret; the message names the field and the kind, never the value.
 */
export function screenCommand<T>(command: CommandName, cmd: T, fingerprintKey: string): ScreenedCommand<T> {
  const w: Walk = { fingerprintKey, fields: new Map() };
  const value = walk({ input: COMMAND_INPUTS[command] }, cmd, '', w, 0) as T;
  return { value, fields: w.fields };
}

/** Findings of the fields at `under` or below it ("" = the whole command). */
export function findingsOf(fields: ReadonlyMap<string, ScreenResult>, under = ''): Findings {
  const hits = [...fields].filter(([p]) => under === '' || p === under || p.startsWith(`${under}.`));
  return {
    labelFloor: highWaterMark(hits.map(([, r]) => r.labelFloor)),
    reasons: [...new Set(hits.flatMap(([, r]) => r.reasons))].sort(),
    secretRefs: hits.flatMap(([, r]) => r.secrets.map((s) => ({ ref: s.ref, kind: s.kind }))),
  };
}

const at = (path: string, key: string | number): string => (path === '' ? String(key) : `${path}.${key}`);

function walk(rule: FieldRule, v: unknown, path: string, w: Walk, depth: number): unknown {
  if (v === undefined || v === null || rule === 'opaque') return v;
  if (Array.isArray(v)) return v.map((x, i) => walk(rule, x, at(path, i), w, depth));
  if (rule === 'json') return walkJson(v, path, w, depth);
  if (typeof rule === 'object') {
    if (typeof v !== 'object') return v;
    const row = SCREENING[rule.input];
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => [k, walk(row[k] ?? 'key', x, at(path, k), w, depth)]),
    );
  }
  if (typeof v === 'object') return walkJson(v, path, w, depth); // fail closed: strings below are screened
  return typeof v === 'string' ? screenString(rule, v, path, w) : v;
}

function walkJson(v: unknown, path: string, w: Walk, depth: number): unknown {
  if (depth > MAX_JSON_DEPTH) throw badInput(`${path} is nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (typeof v === 'string') return screenString('text', v, path, w);
  if (Array.isArray(v)) return v.map((x, i) => walkJson(x, at(path, i), w, depth + 1));
  if (!v || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    // The key is screened before it is used in any path, so a refused key is never named.
    screenString('name', k, `${at(path, k)}#key`, w, `${path} (an object key)`);
    out[k] = walkJson(x, at(path, k), w, depth + 1);
  }
  return out;
}

/** `shown` is how a refusal names the field (an object key is not named by itself). */
function screenString(rule: 'text' | 'name' | 'key', v: string, path: string, w: Walk, shown = path): string {
  const r = screen(v, { fingerprintKey: w.fingerprintKey });
  if (rule !== 'text' && r.secrets.length > 0) {
    const kinds = [...new Set(r.secrets.map((s) => s.kind))];
    throw badInput(
      `${shown} holds what looks like a credential (${kinds.join(', ')}); an identifier is never redacted, so ` +
        'the command is refused — remove the credential (or use a UUID or a readable name)',
      { field: shown, secretKinds: kinds },
    );
  }
  if (rule === 'key') return v;
  w.fields.set(path, r);
  return rule === 'text' ? r.text : v;
}
