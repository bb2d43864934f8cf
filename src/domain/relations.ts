import { z } from 'zod';
import { commandHash, envelope, Purpose, type DecideContext } from './commands.ts';
import type { LedgerEvent } from './events.ts';
import { Instant } from './model.ts';

/**
 * Typed relations (issue #14, part 4): seed 002's closed set (model.ts RelationTypes), each edge with its
 * own confidence and validity. Which of them `relate` writes, which may point at an entity, and which
 * the graph arm of recall walks are decided here, once.
 */

/**
 * What `relate` may write. ABOUT comes from a proposal's `about`, SAME_AS links entities (entity
 * resolution); CONTRADICTS and SUPERSEDES change the other record's status, which the proposal pipeline
 * decides with its visibility rules (fold.ts `activate`), so they are not written on their own.
 */
export const RelateTypes = [
  'SUPPORTS',
  'EXTENDS',
  'DERIVED_FROM',
  'PART_OF',
  'CAUSED_BY',
  'APPLIES_TO',
  'REFERENCES',
  'DUPLICATE_OF',
] as const;
export type RelateType = (typeof RelateTypes)[number];

/** Relations that may end at an entity (a service, a team, a system) as well as at a record. */
export const ENTITY_TARGET_TYPES: readonly RelateType[] = ['APPLIES_TO', 'PART_OF', 'REFERENCES'];

/**
 * The structural relations the graph arm of recall walks from its seed records (both directions): what a
 * record applies to, is part of, was caused by, refers to, supports, is derived from or extends.
 * Duplicates and the pipeline's CONTRADICTS / SUPERSEDES are not walked (precedence handles those).
 */
export const STRUCTURAL_TYPES: readonly RelateType[] = [
  'APPLIES_TO',
  'PART_OF',
  'CAUSED_BY',
  'REFERENCES',
  'SUPPORTS',
  'DERIVED_FROM',
  'EXTENDS',
];

export const TargetKinds = ['RECORD', 'ENTITY'] as const;
export type TargetKind = (typeof TargetKinds)[number];

export const RelateCommand = z
  .object({
    /** The record the relation starts at (the caller writes in its namespace). */
    from: z.string().min(1).max(200),
    /** A record id, or an entity id when `targetKind` is ENTITY. */
    to: z.string().min(1).max(200),
    targetKind: z.enum(TargetKinds).default('RECORD'),
    type: z.enum(RelateTypes),
    confidence: z.number().min(0).max(1).default(1),
    validFrom: Instant.optional(),
    validTo: Instant.optional(),
    reason: z.string().min(1).max(2000),
    purpose: Purpose.default('relate'),
    idempotencyKey: z.string().min(1).max(256),
    changesetId: z.string().min(1).max(200).optional(),
  })
  .refine((c) => c.targetKind === 'RECORD' || ENTITY_TARGET_TYPES.includes(c.type), {
    message: `only ${ENTITY_TARGET_TYPES.join(', ')} may point at an entity`,
    path: ['targetKind'],
  })
  .refine((c) => c.targetKind === 'ENTITY' || c.from !== c.to, {
    message: 'a record is not related to itself',
    path: ['to'],
  })
  .refine((c) => !c.validTo || !c.validFrom || c.validTo > c.validFrom, {
    message: 'validTo must be after validFrom',
    path: ['validTo'],
  });
export type RelateCommand = z.infer<typeof RelateCommand>;

/** `namespace`: the source record's (the relation is written there). */
export function decideRelate(ctx: DecideContext, cmd: RelateCommand, namespace: string): LedgerEvent {
  return {
    ...envelope(ctx, cmd, namespace, commandHash('relate', cmd)),
    type: 'RecordRelated',
    schemaVersion: 1,
    payload: {
      recordId: cmd.from,
      target: cmd.to,
      targetKind: cmd.targetKind,
      type: cmd.type,
      confidence: cmd.confidence,
      validFrom: cmd.validFrom ?? ctx.now.toISOString(),
      validTo: cmd.validTo ?? null,
      reason: cmd.reason,
    },
  };
}

/** Whether an edge's validity holds at `at` (no bounds = always: the pipeline's relate decisions). */
export const relationValidAt = (
  r: { readonly validFrom?: string | null; readonly validTo?: string | null },
  at: string,
): boolean => (r.validFrom ?? '') <= at && (r.validTo === null || r.validTo === undefined || r.validTo > at);
