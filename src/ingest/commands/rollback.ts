import { grantsCover } from '../../domain/access.ts';
import { commandHash, parseCommand, receiptKey } from '../../domain/commands.ts';
import { badInput, forbidden, notFound } from '../../domain/errors.ts';
import type { Compensation, RollbackTarget } from '../../domain/events.ts';
import type { RecordState } from '../../domain/fold.ts';
import { currentRevision, sameStatement } from '../../domain/revisions.ts';
import { hasScope, type Principal } from '../../domain/principal.ts';
import {
  commonNamespace,
  decideRollback,
  RollbackCommand,
  rollbackTarget,
  type RollbackPlan,
} from '../../domain/rollback-command.ts';
import { EPISODE_NODE, planCompensations, planTaints } from '../../domain/rollback-plan.ts';
import type { CommandDeps, WriteDeps } from '../deps.ts';
import { commit } from '../commit.ts';
import { contextOf, embeddingsOf, priorReceipt, screenOf } from '../steps.ts';
import type { WriteReceipt } from '../receipts.ts';

/** How far a taint walks (hops from the reverted record). */
const TAINT_DEPTH = 16;
/** One RolledBack event must fit a ledger message (~1 MB): larger rollbacks are split by the caller. */
const MAX_CHANGES = 1000;

export interface RollbackReceipt extends WriteReceipt {
  readonly rollbackId: string | null;
  readonly reverted: readonly string[];
  readonly restored: readonly string[];
  readonly review: readonly string[];
  readonly tainted: readonly string[];
}

/**
 * rollback: plan at request time from the graph (which events, which records, what each goes back to,
 * what derived from them), then append ONE RolledBack event carrying that plan. Needs the review scope
 * and a grant covering every namespace it reaches, and every record it compensates must be readable by
 * the caller: a rollback is a judgement on knowledge, like a review decision (not an admin act), and it
 * deletes nothing. Refusals (FORBIDDEN, NOT_FOUND) append nothing.
 */
export async function rollback(
  d: CommandDeps & Pick<WriteDeps, 'embedder'>,
  principal: Principal,
  input: unknown,
  wait: boolean,
): Promise<RollbackReceipt> {
  const cmd = screenOf(d, 'rollback', parseCommand(RollbackCommand, input)).value;
  // Before any lookup: without the scope, whether the event or changeset exists is not disclosed.
  if (!hasScope(principal, 'review')) throw forbidden('the review scope is required to roll back');
  const target = rollbackTarget(cmd);
  if (target.kind === 'NAMESPACE') await d.policy.checkReview(principal, target.namespace);
  const hash = commandHash('rollback', cmd);
  const key = receiptKey(principal, cmd.idempotencyKey);
  const prior = await priorReceipt(d, principal.tenant, key, hash);
  if (prior) return { ...prior, rollbackId: null, reverted: [], restored: [], review: [], tainted: [] };
  const plan = await planFor(d, principal, target, cmd.reason);
  const ctx = contextOf(d, principal);
  const event = decideRollback(ctx, cmd, plan);
  const receipt = await commit(d, principal, key, hash, [event], wait);
  const ids = (a: string) => plan.compensations.filter((c) => c.action === a).map((c) => c.recordId);
  return {
    ...receipt,
    rollbackId: plan.rollbackId,
    reverted: ids('REVERT'),
    restored: ids('RESTORE'),
    review: ids('REVIEW'),
    tainted: plan.taints.map((t) => t.recordId),
  };
}

async function planFor(
  d: CommandDeps & Pick<WriteDeps, 'embedder'>,
  principal: Principal,
  target: RollbackTarget,
  reason: string,
): Promise<RollbackPlan> {
  const { records, eventIds } = await d.store.rollbackScope(principal.tenant, target);
  const compensations = planCompensations(records, new Set(eventIds), reason);
  if (compensations.length === 0) throw notFound(`nothing to roll back for ${describe(target)}`);
  const touched = records.filter((r) => compensations.some((c) => c.recordId === r.id));
  await checkReach(d, principal, touched, compensations);
  const seeds = [
    ...compensations.filter((c) => c.action !== 'REVIEW').map((c) => c.recordId),
    ...touched.flatMap((r) => {
      const c = compensations.find((x) => x.recordId === r.id);
      return c?.action === 'REVERT' && r.episodeId ? [`${EPISODE_NODE}${r.episodeId}`] : [];
    }),
  ];
  const edges = await d.store.derivations(principal.tenant, seeds, TAINT_DEPTH);
  const taints = planTaints(seeds, edges, new Set(compensations.map((c) => c.recordId)), reason);
  if (compensations.length > MAX_CHANGES || taints.length > MAX_CHANGES)
    throw badInput(
      `the rollback would change ${compensations.length} records and taint ${taints.length} (at most ` +
        `${MAX_CHANGES} each): roll back a smaller changeset or a narrower namespace`,
    );
  return {
    rollbackId: d.ids.uuid(),
    target,
    namespace:
      target.kind === 'NAMESPACE' ? target.namespace : commonNamespace(touched.map((r) => r.namespace)),
    compensations: await withVectors(d, compensations, touched),
    taints,
  };
}

/**
 * Every compensated record must be one the caller may read, in a namespace it may review; a record the
 * rollback moves back (a reverted move) needs the review grant on the namespace it returns to as well.
 */
async function checkReach(
  d: CommandDeps,
  principal: Principal,
  records: readonly RecordState[],
  compensations: readonly Compensation[],
) {
  const scope = await d.policy.readScope(principal, undefined);
  if (!records.every((r) => grantsCover(scope.grants, r)))
    throw forbidden('the rollback reaches records you may not read');
  const movedTo = compensations.flatMap((c) => c.target?.classification?.namespace ?? []);
  for (const ns of new Set([...records.map((r) => r.namespace), ...movedTo]))
    await d.policy.checkReview(principal, ns);
}

const describe = (t: RollbackTarget): string =>
  t.kind === 'EVENT'
    ? `event ${t.eventId}`
    : t.kind === 'CHANGESET'
      ? `changeset ${t.changesetId}`
      : `namespace ${t.namespace} since ${t.to}`;

/**
 * The vector of each text a compensation gives back in place of other words, in one model call, as a
 * revise embeds its new words: the record is found by the meaning it has again, not the one it loses.
 */
async function withVectors(
  d: Pick<WriteDeps, 'embedder'>,
  compensations: readonly Compensation[],
  records: readonly RecordState[],
): Promise<Compensation[]> {
  const now = new Map(records.map((r) => [r.id, currentRevision(r).statement]));
  const changed = compensations.filter((c) => {
    const was = now.get(c.recordId);
    return c.target && was && !sameStatement(c.target.statement, was);
  });
  if (changed.length === 0) return [...compensations];
  const embeddings = await embeddingsOf(
    d,
    changed.map((c) => c.target!.statement.text),
  );
  const byRecord = new Map(changed.map((c, i) => [c.recordId, embeddings[i] ?? null]));
  return compensations.map((c) =>
    c.target && byRecord.has(c.recordId)
      ? { ...c, target: { ...c.target, embedding: byRecord.get(c.recordId)! } }
      : c,
  );
}
