import { z } from 'zod';
import type { LedgerEvent, TaintMark } from './events.ts';
import { Instant, NamespacePath, RecordClasses, Sensitivities, Statement } from './model.ts';
import { commandHash, envelope, IdempotencyKey, Purpose, type DecideContext } from './command-envelope.ts';

/** Changes to an existing record: revise and retract. */

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
