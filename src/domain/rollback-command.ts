import { z } from 'zod';
import { commandHash, envelope, type DecideContext } from './commands.ts';
import { badInput } from './errors.ts';
import { type Compensation, type LedgerEvent, type RollbackTarget, type TaintMark } from './events.ts';
import { encodeEvent } from './event-wire.ts';
import { Instant, NamespacePath } from './model.ts';

/**
 * The rollback command: exactly one of an event id, a changeset id (`episode:<id>`, `handoff:seq:<n>`, a
 * writer's own), or a namespace subtree with a system time `to`. Decided into ONE `RolledBack` event that
 * carries the plan (rollback-plan.ts).
 */
export const RollbackCommand = z
  .object({
    eventId: z.string().min(1).max(200).optional(),
    changesetId: z.string().min(1).max(200).optional(),
    namespace: NamespacePath.optional(),
    to: Instant.optional(),
    reason: z.string().min(1).max(2000),
    idempotencyKey: z.string().min(1).max(256),
  })
  .refine((c) => [c.eventId, c.changesetId, c.namespace].filter((x) => x !== undefined).length === 1, {
    message: 'give exactly one of eventId, changesetId, namespace',
  })
  .refine((c) => (c.namespace === undefined) === (c.to === undefined), {
    message: 'namespace and to go together',
    path: ['to'],
  });
export type RollbackCommand = z.infer<typeof RollbackCommand>;

export function rollbackTarget(cmd: RollbackCommand): RollbackTarget {
  if (cmd.eventId !== undefined) return { kind: 'EVENT', eventId: cmd.eventId };
  if (cmd.changesetId !== undefined) return { kind: 'CHANGESET', changesetId: cmd.changesetId };
  return { kind: 'NAMESPACE', namespace: cmd.namespace!, to: cmd.to! };
}

/** The deepest namespace containing all of them (the event's namespace); the first one's top when none. */
export function commonNamespace(namespaces: readonly string[]): string {
  const parts = namespaces.map((n) => n.split('/'));
  const first = parts[0] ?? ['default'];
  let i = 0;
  while (i < first.length && parts.every((p) => p[i] === first[i])) i++;
  return first.slice(0, Math.max(i, 1)).join('/');
}

export interface RollbackPlan {
  readonly rollbackId: string;
  readonly target: RollbackTarget;
  readonly namespace: string;
  readonly compensations: readonly Compensation[];
  readonly taints: readonly TaintMark[];
}

/**
 * The event's bytes before sealing, at most: sealing turns the restored words and vectors into base64 (a
 * third more), and a Kafka message is at most 1 MiB. A restored text's vector takes ~8 KB of it.
 */
export const MAX_ROLLBACK_BYTES = 700_000;

/** The RolledBack event of a plan; BAD_USER_INPUT when it would not fit one ledger message. */
export function decideRollback(ctx: DecideContext, cmd: RollbackCommand, plan: RollbackPlan): LedgerEvent {
  const event = rolledBackOf(ctx, cmd, plan);
  const bytes = Buffer.byteLength(encodeEvent(event));
  if (bytes > MAX_ROLLBACK_BYTES)
    throw badInput(
      `the rollback would be a ${bytes}-byte event (at most ${MAX_ROLLBACK_BYTES}): roll back a smaller ` +
        'changeset or a narrower namespace',
    );
  return event;
}

function rolledBackOf(ctx: DecideContext, cmd: RollbackCommand, plan: RollbackPlan): LedgerEvent {
  return {
    ...envelope(
      ctx,
      {
        idempotencyKey: cmd.idempotencyKey,
        purpose: 'correction',
        // A rollback is a changeset of its own: it can be rolled back in turn.
        changesetId: `rollback:${plan.rollbackId}`,
      },
      plan.namespace,
      commandHash('rollback', cmd),
    ),
    type: 'RolledBack',
    schemaVersion: 1,
    payload: {
      rollbackId: plan.rollbackId,
      target: plan.target,
      reason: cmd.reason,
      compensations: plan.compensations.map((c) => ({ ...c })),
      taints: plan.taints.map((t) => ({ ...t, path: [...t.path] })),
    },
  };
}
