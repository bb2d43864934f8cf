import { z } from 'zod';
import { badInput } from './errors.ts';
import { canonicalJson, MUNINN_NS, sha256Hex, uuidV5 } from './canonical.ts';
import type { EmbeddingCache, Envelope, LedgerEvent, RelationDecision, TaintMark } from './events.ts';
import {
  Instant,
  NamespacePath,
  nestedDeeperThan,
  RecordClasses,
  Sensitivities,
  SourceSpan,
  Statement,
} from './model.ts';
import type { Principal } from './principal.ts';
import { GrantRoles } from './stewardship-model.ts';

/**
 * Commands are imperative and validated once; `decide*` turns a valid command into past-tense events.
 * Decisions are pure: time and ids are inputs.
 */

const IdempotencyKey = z.string().min(1).max(256);
export const Purpose = z.string().min(1).max(200);

export const EntityRef = z
  .object({
    id: z.string().min(1).max(200).optional(),
    alias: z.string().min(1).max(500).optional(),
    externalId: z.string().min(1).max(500).optional(),
    type: z.string().min(1).max(100).optional(),
  })
  .refine((r) => r.id || r.alias || r.externalId, 'an entity reference needs id, alias or externalId');
export type EntityRef = z.infer<typeof EntityRef>;

export const ProposeCommand = z
  .object({
    namespace: NamespacePath,
    class: z.enum(RecordClasses),
    statement: Statement,
    about: z.array(EntityRef).max(32).default([]),
    sources: z.array(SourceSpan).max(256).default([]),
    validFrom: Instant.optional(),
    validTo: Instant.optional(),
    sensitivity: z.enum(Sensitivities).default('INTERNAL'),
    rationale: z.string().min(1).max(20_000).optional(),
    purpose: Purpose,
    idempotencyKey: IdempotencyKey,
    changesetId: z.string().min(1).max(200).optional(),
    /** Records the new one was derived from: each must exist and be visible to the writer. */
    derivedFrom: z.array(z.string().min(1).max(200)).min(1).max(64).optional(),
    ext: z
      .record(
        z.string().regex(/^[a-z][a-z0-9]*:[A-Za-z0-9_.-]+$/, 'extension keys are prefixed, e.g. swe:adr'),
        z.unknown(),
      )
      .default({}),
  })
  .refine((c) => !c.validTo || !c.validFrom || c.validTo > c.validFrom, {
    message: 'validTo must be after validFrom',
    path: ['validTo'],
  })
  .refine((c) => c.class !== 'DECISION' || !!c.rationale, {
    message: 'a DECISION needs a rationale',
    path: ['rationale'],
  })
  .refine((c) => c.sources.every((s) => s.end >= s.start), {
    message: 'a span ends after it starts',
    path: ['sources'],
  });
export type ProposeCommand = z.infer<typeof ProposeCommand>;

export const ReviseCommand = z
  .object({
    id: z.string().min(1).max(200),
    expectedVersion: z.number().int().min(1),
    statement: Statement.optional(),
    validFrom: Instant.optional(),
    validTo: Instant.optional(),
    /** Reclassify: the record's new class. */
    class: z.enum(RecordClasses).optional(),
    /** Relabel: writers may only raise it; lowering needs the review scope. */
    sensitivity: z.enum(Sensitivities).optional(),
    /** Rescope: move the record (same id and history) into this namespace. */
    namespace: NamespacePath.optional(),
    /** Why; kept on the revision (required for a class, label or namespace change). */
    reason: z.string().min(1).max(2000).optional(),
    purpose: Purpose,
    idempotencyKey: IdempotencyKey,
    changesetId: z.string().min(1).max(200).optional(),
  })
  .refine(
    (c) => c.statement || c.validFrom || c.validTo || c.class || c.sensitivity || c.namespace,
    'a revision changes the statement, the validity, the class, the label or the namespace',
  )
  .refine((c) => !(c.class || c.sensitivity || c.namespace) || !!c.reason, {
    message: 'a class, label or namespace change needs a reason',
    path: ['reason'],
  });
export type ReviseCommand = z.infer<typeof ReviseCommand>;

export const RetractCommand = z.object({
  id: z.string().min(1).max(200),
  expectedVersion: z.number().int().min(1),
  reason: z.string().min(1).max(2000),
  purpose: Purpose.default('correction'),
  idempotencyKey: IdempotencyKey,
  changesetId: z.string().min(1).max(200).optional(),
});
export type RetractCommand = z.infer<typeof RetractCommand>;

/** Deepest command input accepted; JSON extensions are limited further where they enter (the API scalar). */
export const MAX_INPUT_DEPTH = 64;

/** Validates `input` against `schema`; every problem becomes one BAD_USER_INPUT listing all of them. */
export function parseCommand<S extends z.ZodType>(
  schema: S,
  input: unknown,
  maxTextChars?: number,
): z.infer<S> {
  // Before anything recurses into it (the text scan below, zod, canonical JSON).
  if (nestedDeeperThan(input, MAX_INPUT_DEPTH))
    throw badInput(`input is nested deeper than ${MAX_INPUT_DEPTH} levels`);
  if (maxTextChars !== undefined) {
    const long = findLongString(input, maxTextChars);
    if (long) throw badInput(`${long} is longer than ${maxTextChars} characters`, { field: long });
  }
  const r = schema.safeParse(input);
  if (!r.success) {
    const problems = r.error.issues.map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`);
    throw badInput(`invalid input: ${problems.join('; ')}`, { problems });
  }
  return r.data;
}

function findLongString(v: unknown, max: number, path = 'input'): string | undefined {
  if (typeof v === 'string') return v.length > max ? path : undefined;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const p = findLongString(v[i], max, `${path}.${i}`);
      if (p) return p;
    }
  } else if (v && typeof v === 'object') {
    for (const [key, x] of Object.entries(v)) {
      const p = findLongString(x, max, path === 'input' ? key : `${path}.${key}`);
      if (p) return p;
    }
  }
  return undefined;
}

/** The hash that decides "same command" for idempotency: the validated input minus transport options. */
export const commandHash = (kind: string, cmd: object): string => sha256Hex(canonicalJson({ kind, cmd }));

export interface DecideContext {
  readonly principal: Principal;
  readonly now: Date;
  readonly newId: () => string;
}

/**
 * Idempotency keys live in one key space per principal: the stored key is a tag of (iss, sub), the key's
 * origin, then the key. Another principal's identical key is another key, so a receipt is never returned
 * to anyone but its writer, and nobody can use up a key someone else will use. Keys the service derives
 * (`approve:<id>:v<n>`, `revoke:<grantId>`, feedback) have origin "d", a writer's own keys "u" (or "h",
 * hashed, when long): a writer's key can never equal a derived one, not even its own.
 */
export function receiptKey(
  principal: Pick<Principal, 'iss' | 'sub'>,
  key: string,
  origin: 'user' | 'derived' = 'user',
): string {
  const tag = sha256Hex(`${principal.iss}|${principal.sub}`).slice(0, 24);
  if (origin === 'derived') return `${tag}:d:${key}`;
  // Short enough that a suffix (#stmt:n#entity:<uuid>) still fits the envelope's 256 characters.
  return key.length <= 128 ? `${tag}:u:${key}` : `${tag}:h:${sha256Hex(key)}`;
}

export function envelope(
  ctx: DecideContext,
  cmd: { idempotencyKey: string; derivedKey?: boolean; purpose: string; changesetId?: string | undefined },
  namespace: string,
  hash: string,
  suffix = '',
): Omit<Envelope, 'type' | 'schemaVersion'> {
  return {
    eventId: ctx.newId(),
    tenant: ctx.principal.tenant,
    namespace,
    idempotencyKey:
      receiptKey(ctx.principal, cmd.idempotencyKey, cmd.derivedKey ? 'derived' : 'user') + suffix,
    commandHash: hash,
    principal: { iss: ctx.principal.iss, sub: ctx.principal.sub },
    actors: ctx.principal.actors.map((a) => ({ iss: a.iss ?? null, sub: a.sub })),
    purpose: cmd.purpose,
    changesetId: cmd.changesetId ?? null,
    recordedAt: ctx.now.toISOString(),
  };
}

/**
 * A proposal's record id follows from its receipt key and input: a retry of a write whose append was
 * ambiguous (the ledger failed to answer, or the client gave up waiting) is answered with the id of the
 * record that lands, whichever of the two appends the projection keeps (it keeps the first: fold.ts).
 * With a random id, a PENDING answer to the retry named a record that was never stored.
 */
const recordIdFor = (tenant: string, receiptKey: string, hash: string): string =>
  uuidV5(`record|${tenant}|${receiptKey}|${hash}`, MUNINN_NS);

/** Deterministic entity id: the same (tenant, type, name) always names the same entity. */
export const entityIdFor = (tenant: string, type: string | undefined, name: string): string =>
  uuidV5(`${tenant}\u0000${(type ?? '').toLowerCase()}\u0000${name.trim().toLowerCase()}`, MUNINN_NS);

/**
 * The writer's own entity, when the default id is taken by one the writer may not see: one per request
 * and name, so a retry of the request (after an append whose answer was lost) names the same entity.
 */
export const privateEntityIdFor = (
  tenant: string,
  requestKey: string,
  type: string | undefined,
  name: string,
): string => uuidV5(`entity|${requestKey}|${entityIdFor(tenant, type, name)}`, MUNINN_NS);

export interface ResolvedEntity {
  readonly ref: EntityRef;
  /** The existing entity's id, when the reference resolved to one. */
  readonly existingId: string | undefined;
  /**
   * The id of the entity to create, when not the deterministic one (it is taken by an entity the
   * writer may not see: the writer gets an entity of its own rather than that one).
   */
  readonly newId?: string | undefined;
}

/** What the ingest pipeline adds to a plain proposal: its decisions, recorded in the event. */
export interface PipelineDecisions {
  readonly status: 'ACTIVE' | 'CANDIDATE';
  readonly confidence?: number;
  readonly relation?: RelationDecision | null;
  readonly reviewReasons?: readonly string[];
  readonly flags?: readonly string[];
  readonly embedding?: EmbeddingCache | null;
  readonly entityEmbeddings?: ReadonlyMap<string, EmbeddingCache>;
  readonly episodeId?: string | null;
  readonly timeSource?: 'STATED' | 'INFERRED' | 'DEFAULTED';
  readonly sameAs?: ReadonlyMap<string, { entityId: string; confidence: number }>;
  /** Key suffix when one command proposes several records (episode ingest). */
  readonly keySuffix?: string;
  /** The hash of the request the events belong to, when it is not this proposal alone (ingest's plan). */
  readonly commandHash?: string;
}

export function decidePropose(
  ctx: DecideContext,
  cmd: ProposeCommand,
  resolved: readonly ResolvedEntity[],
  decisions: PipelineDecisions | 'ACTIVE' | 'CANDIDATE',
): LedgerEvent[] {
  const d: PipelineDecisions = typeof decisions === 'string' ? { status: decisions } : decisions;
  const status = d.status;
  const suffix = d.keySuffix ?? '';
  const hash = d.commandHash ?? commandHash('propose', cmd);
  const events: LedgerEvent[] = [];
  const about: string[] = [];
  for (const [i, r] of resolved.entries()) {
    if (r.existingId) {
      about.push(r.existingId);
      continue;
    }
    if (r.ref.id) throw badInput(`about.${i}: no entity with id ${r.ref.id}`);
    const name = r.ref.alias ?? r.ref.externalId!;
    const entityId = r.newId ?? entityIdFor(ctx.principal.tenant, r.ref.type, name);
    about.push(entityId);
    events.push({
      ...envelope(ctx, cmd, cmd.namespace, hash, `${suffix}#entity:${entityId}`),
      type: 'EntityCreated',
      schemaVersion: 1,
      payload: {
        entityId,
        name,
        type: r.ref.type ?? null,
        aliases: r.ref.alias ? [r.ref.alias.toLowerCase()] : [],
        externalIds: r.ref.externalId ? [r.ref.externalId] : [],
        sameAs: d.sameAs?.get(entityId) ?? null,
        embedding: d.entityEmbeddings?.get(entityId) ?? null,
      },
    });
  }
  const env = envelope(ctx, cmd, cmd.namespace, hash, suffix);
  events.push({
    ...env,
    type: 'RecordProposed',
    schemaVersion: 1,
    payload: {
      recordId: recordIdFor(env.tenant, env.idempotencyKey, hash),
      class: cmd.class,
      statement: cmd.statement,
      about: [...new Set(about)].sort(),
      sensitivity: cmd.sensitivity,
      confidence: d.confidence ?? 0.5,
      validFrom: cmd.validFrom ?? ctx.now.toISOString(),
      validTo: cmd.validTo ?? null,
      timeSource: d.timeSource ?? (cmd.validFrom ? 'STATED' : 'DEFAULTED'),
      status,
      rationale: cmd.rationale ?? null,
      sources: cmd.sources,
      ext: cmd.ext,
      episodeId: d.episodeId ?? null,
      relation: d.relation ?? null,
      reviewReasons: [...(d.reviewReasons ?? [])],
      flags: [...(d.flags ?? [])],
      embedding: d.embedding ?? null,
      derivedFrom: [...new Set(cmd.derivedFrom ?? [])].sort(),
    },
  });
  return events;
}

export function decideRevise(ctx: DecideContext, cmd: ReviseCommand, namespace: string): LedgerEvent {
  return {
    ...envelope(ctx, cmd, namespace, commandHash('revise', cmd)),
    type: 'RecordRevised',
    schemaVersion: 2,
    payload: {
      recordId: cmd.id,
      expectedVersion: cmd.expectedVersion,
      statement: cmd.statement ?? null,
      validFrom: cmd.validFrom ?? null,
      validTo: cmd.validTo ?? null,
      embedding: null,
      class: cmd.class ?? null,
      sensitivity: cmd.sensitivity ?? null,
      namespace: cmd.namespace ?? null,
      reason: cmd.reason ?? null,
    },
  };
}

export function decideRetract(
  ctx: DecideContext,
  cmd: RetractCommand,
  namespace: string,
  taints: readonly TaintMark[] = [],
): LedgerEvent {
  return {
    ...envelope(ctx, cmd, namespace, commandHash('retract', cmd)),
    type: 'RecordRetracted',
    schemaVersion: 1,
    payload: {
      recordId: cmd.id,
      expectedVersion: cmd.expectedVersion,
      reason: cmd.reason,
      taints: [...taints],
    },
  };
}

export const ApproveCommand = z.object({
  proposalId: z.string().min(1).max(200),
  expectedVersion: z.number().int().min(1),
  idempotencyKey: IdempotencyKey.optional(),
});
export type ApproveCommand = z.infer<typeof ApproveCommand>;

export const RejectCommand = z.object({
  proposalId: z.string().min(1).max(200),
  reason: z.string().min(1).max(2000),
  expectedVersion: z.number().int().min(1).optional(),
  idempotencyKey: IdempotencyKey.optional(),
});
export type RejectCommand = z.infer<typeof RejectCommand>;

/**
 * A review decision's key defaults to one per (reviewer, proposal, version): a reviewer's retry is
 * idempotent, and (derived, in the reviewer's own key space) no one else can take it first.
 */
const reviewKey = (kind: string, id: string, version: number, key: string | undefined) =>
  key
    ? { idempotencyKey: key, purpose: 'review' }
    : { idempotencyKey: `${kind}:${id}:v${version}`, derivedKey: true, purpose: 'review' };

/** `required`: approvers other than the proposer the rules ask for (see review.ts); recorded in the event. */
export function decideApprove(
  ctx: DecideContext,
  cmd: ApproveCommand,
  namespace: string,
  required = 0,
): LedgerEvent {
  const meta = reviewKey('approve', cmd.proposalId, cmd.expectedVersion, cmd.idempotencyKey);
  return {
    ...envelope(
      ctx,
      meta,
      namespace,
      commandHash('approve', { ...cmd, by: `${ctx.principal.iss}|${ctx.principal.sub}` }),
    ),
    type: 'ProposalApproved',
    schemaVersion: 2,
    payload: { recordId: cmd.proposalId, expectedVersion: cmd.expectedVersion, required },
  };
}

export function decideReject(
  ctx: DecideContext,
  cmd: RejectCommand & { expectedVersion: number },
  namespace: string,
): LedgerEvent {
  const meta = reviewKey('reject', cmd.proposalId, cmd.expectedVersion, cmd.idempotencyKey);
  return {
    ...envelope(
      ctx,
      meta,
      namespace,
      commandHash('reject', { ...cmd, by: `${ctx.principal.iss}|${ctx.principal.sub}` }),
    ),
    type: 'ProposalRejected',
    schemaVersion: 1,
    payload: { recordId: cmd.proposalId, expectedVersion: cmd.expectedVersion, reason: cmd.reason },
  };
}

export const TurnInput = z.object({
  role: z.string().min(1).max(50),
  speaker: z.string().min(1).max(200).optional(),
  text: z.string().max(100_000),
  label: z.string().min(1).max(200).optional(),
});

export const EpisodeCommand = z.object({
  namespace: NamespacePath,
  source: z.string().min(1).max(200),
  occurredAt: Instant,
  turns: z.array(TurnInput).min(1).max(5000),
  purpose: Purpose,
  idempotencyKey: IdempotencyKey,
  changesetId: z.string().min(1).max(200).optional(),
  sensitivity: z.enum(Sensitivities).default('INTERNAL'),
  /** Every extracted statement waits for a reviewer (CANDIDATE drafts), whatever the admission policy says. */
  review: z.boolean().default(false),
});
export type EpisodeCommand = z.infer<typeof EpisodeCommand>;

// ── access grants and recall feedback ────────────────────────────────────────────────────────────────

export const GrantAccessCommand = z.object({
  /** The person or agent, keyed on (iss, sub); iss defaults to the granting admin's issuer. */
  grantee: z.object({ iss: z.string().min(1).max(500).optional(), sub: z.string().min(1).max(500) }),
  namespace: NamespacePath,
  maxSensitivity: z.enum(Sensitivities),
  /** Purposes the grant is for; absent = any purpose. */
  purposes: z.array(Purpose).min(1).max(32).optional(),
  /** OWNER or STEWARD also names the grantee the subtree's owner or steward; absent = READER. */
  role: z.enum(GrantRoles).optional(),
  reason: z.string().min(1).max(2000),
  idempotencyKey: IdempotencyKey,
});
export type GrantAccessCommand = z.infer<typeof GrantAccessCommand>;

export const RevokeAccessCommand = z.object({
  grantId: z.string().min(1).max(200),
  reason: z.string().min(1).max(2000),
  idempotencyKey: IdempotencyKey.optional(),
});
export type RevokeAccessCommand = z.infer<typeof RevokeAccessCommand>;

export function decideGrant(ctx: DecideContext, cmd: GrantAccessCommand): LedgerEvent {
  const hash = commandHash('grant', cmd);
  return {
    ...envelope(ctx, { idempotencyKey: cmd.idempotencyKey, purpose: 'administration' }, cmd.namespace, hash),
    type: 'AccessGranted',
    schemaVersion: 1,
    payload: {
      // Deterministic: a retried grant names the same grant (in the granting admin's key space).
      grantId: uuidV5(
        `grant|${ctx.principal.tenant}|${receiptKey(ctx.principal, cmd.idempotencyKey)}`,
        MUNINN_NS,
      ),
      grantee: { iss: cmd.grantee.iss ?? ctx.principal.iss, sub: cmd.grantee.sub },
      maxSensitivity: cmd.maxSensitivity,
      purposes: cmd.purposes ? [...new Set(cmd.purposes)].sort() : null,
      role: cmd.role ?? 'READER',
    },
  };
}

export function decideRevoke(ctx: DecideContext, cmd: RevokeAccessCommand, namespace: string): LedgerEvent {
  const key = cmd.idempotencyKey
    ? { idempotencyKey: cmd.idempotencyKey }
    : { idempotencyKey: `revoke:${cmd.grantId}`, derivedKey: true };
  return {
    ...envelope(ctx, { ...key, purpose: 'administration' }, namespace, commandHash('revoke', cmd)),
    type: 'AccessRevoked',
    schemaVersion: 1,
    payload: { grantId: cmd.grantId, reason: cmd.reason },
  };
}

export const FeedbackVerdicts = ['USED', 'IGNORED', 'WRONG'] as const;
export const FeedbackCommand = z.object({
  recallId: z.string().min(1).max(200),
  handle: z.string().min(1).max(400),
  verdict: z.enum(FeedbackVerdicts),
  purpose: Purpose.optional(),
});
export type FeedbackCommand = z.infer<typeof FeedbackCommand>;

/** One verdict per caller per recalled item: a retry is a no-op, a changed verdict a CONFLICT. */
export function decideFeedback(
  ctx: DecideContext,
  cmd: FeedbackCommand,
  recordId: string,
  namespace: string,
): LedgerEvent {
  // In the caller's key space already; the recall and the record make it one per item.
  const key = `feedback:${sha256Hex(`${cmd.recallId}\u0000${recordId}`).slice(0, 40)}`;
  return {
    ...envelope(
      ctx,
      { idempotencyKey: key, derivedKey: true, purpose: 'feedback' },
      namespace,
      commandHash('feedback', cmd),
    ),
    type: 'FeedbackRecorded',
    schemaVersion: 1,
    payload: { recordId, recallId: cmd.recallId, verdict: cmd.verdict },
  };
}
