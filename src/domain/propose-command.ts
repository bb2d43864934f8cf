import { z } from 'zod';
import { badInput } from './errors.ts';
import { MUNINN_NS, uuidV5 } from './canonical.ts';
import type { EmbeddingCache, LedgerEvent, RelationDecision } from './events.ts';
import { Instant, NamespacePath, RecordClasses, Sensitivities, SourceSpan, Statement } from './model.ts';
import { commandHash, envelope, IdempotencyKey, Purpose, type DecideContext } from './command-envelope.ts';

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
  const suffix = d.keySuffix ?? '';
  const hash = d.commandHash ?? commandHash('propose', cmd);
  const { about, events } = newEntities(ctx, cmd, resolved, d, hash);
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
      status: d.status,
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

/** The ids the proposal is about, and an `EntityCreated` for each reference that named no existing entity. */
function newEntities(
  ctx: DecideContext,
  cmd: ProposeCommand,
  resolved: readonly ResolvedEntity[],
  d: PipelineDecisions,
  hash: string,
): { about: string[]; events: LedgerEvent[] } {
  const suffix = d.keySuffix ?? '';
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
  return { about, events };
}
