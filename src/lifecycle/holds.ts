import { z } from 'zod';
import { canonicalJson, sha256Hex } from '../domain/canonical.ts';
import { receiptKey } from '../domain/commands.ts';
import { badInput, conflict, forbidden, notFound } from '../domain/errors.ts';
import type { Envelope, LedgerEvent } from '../domain/events.ts';
import { NamespacePath } from '../domain/model.ts';
import { hasScope, type Principal } from '../domain/principal.ts';
import type { HoldView } from '../ports/erasure.ts';
import type { ErasureDeps } from './erasure.ts';

/**
 * Legal holds: an admin places one on a namespace subtree or a record, and releases it; while it stands,
 * `erase` refuses (CONFLICT) anything under it. Both acts are ledger events (who, when, why), so they
 * replay and can be reviewed like every other change.
 */
const PlaceHold = z
  .object({
    namespace: NamespacePath.optional(),
    recordId: z.string().min(1).max(200).optional(),
    reason: z.string().trim().min(1).max(2000),
    idempotencyKey: z.string().min(1).max(200),
  })
  .strict()
  .refine((c) => (c.namespace === undefined) !== (c.recordId === undefined), 'name a namespace or a record');

const ReleaseHold = z
  .object({
    holdId: z.string().min(1).max(200),
    reason: z.string().trim().min(1).max(2000),
    idempotencyKey: z.string().min(1).max(200),
  })
  .strict();

export interface HoldReceipt {
  readonly holdId: string;
  readonly outcome: string;
  readonly reason: string | null;
}

type HoldDeps = Pick<
  ErasureDeps,
  'ledger' | 'lookups' | 'store' | 'projection' | 'screen' | 'clock' | 'ids' | 'awaitTimeoutMs'
>;

export class HoldService {
  constructor(private readonly d: HoldDeps) {}

  async place(principal: Principal, input: unknown): Promise<HoldReceipt> {
    const cmd = this.parse(principal, PlaceHold, input, 'place a legal hold', 'placeHold');
    let namespace = cmd.namespace;
    if (cmd.recordId) {
      const [item] = await this.d.lookups.plan(principal.tenant, { kind: 'RECORD', recordId: cmd.recordId });
      if (!item) throw notFound(`no record ${cmd.recordId}`);
      namespace = item.namespace;
    }
    const holdId = sha256Hex(receiptKey(principal, cmd.idempotencyKey, 'user')).slice(0, 32);
    const payload = {
      holdId,
      target: cmd.recordId ? ('RECORD' as const) : ('NAMESPACE' as const),
      recordId: cmd.recordId ?? null,
      reason: cmd.reason,
    };
    return this.commit(principal, cmd.idempotencyKey, { type: 'HoldPlaced', payload }, namespace!, holdId);
  }

  async release(principal: Principal, input: unknown): Promise<HoldReceipt> {
    const cmd = this.parse(principal, ReleaseHold, input, 'release a legal hold', 'releaseHold');
    const holds = await this.d.lookups.holds(principal.tenant, true);
    const hold = holds.find((h) => h.id === cmd.holdId);
    if (!hold) throw notFound(`no hold ${cmd.holdId}`);
    const payload = { holdId: cmd.holdId, reason: cmd.reason };
    return this.commit(
      principal,
      cmd.idempotencyKey,
      { type: 'HoldReleased', payload },
      hold.namespace,
      hold.id,
    );
  }

  async list(principal: Principal): Promise<HoldView[]> {
    if (!hasScope(principal, 'admin')) throw forbidden('the admin scope is required to list legal holds');
    return this.d.lookups.holds(principal.tenant, true);
  }

  private parse<T>(
    principal: Principal,
    schema: z.ZodType<T>,
    input: unknown,
    what: string,
    command: 'placeHold' | 'releaseHold',
  ): T {
    if (!hasScope(principal, 'admin')) throw forbidden(`the admin scope is required to ${what}`);
    const parsed = schema.safeParse(input);
    if (!parsed.success) throw badInput(parsed.error.issues.map((i) => i.message).join('; '));
    return this.d.screen(command, parsed.data) as T;
  }

  private async commit(
    p: Principal,
    key: string,
    body: Pick<LedgerEvent, 'type' | 'payload'>,
    namespace: string,
    holdId: string,
  ): Promise<HoldReceipt> {
    const idempotencyKey = receiptKey(p, key, 'user');
    const commandHash = sha256Hex(canonicalJson({ kind: body.type, payload: body.payload, namespace }));
    const prior = await this.d.store.receiptsByPrefix(p.tenant, idempotencyKey);
    const same = prior.find((r) => r.idempotencyKey === idempotencyKey);
    if (same && same.commandHash !== commandHash)
      throw conflict('this idempotency key was used for another command');
    if (same) return { holdId, outcome: same.outcome, reason: same.reason };
    const env: Envelope = {
      eventId: this.d.ids.uuid(),
      type: body.type,
      schemaVersion: 1,
      tenant: p.tenant,
      namespace,
      idempotencyKey,
      commandHash,
      principal: { iss: p.iss, sub: p.sub },
      actors: p.actors.map((a) => ({ iss: a.iss ?? null, sub: a.sub })),
      purpose: 'legal-hold',
      changesetId: null,
      recordedAt: this.d.clock.now().toISOString(),
    };
    const [pos] = await this.d.ledger.append([{ ...env, ...body } as LedgerEvent]);
    const ok = await this.d.projection.waitFor(pos!.partition, pos!.offset, this.d.awaitTimeoutMs);
    if (!ok) return { holdId, outcome: 'PENDING', reason: null };
    const done = (await this.d.store.receiptsByPrefix(p.tenant, idempotencyKey)).find(
      (r) => r.idempotencyKey === idempotencyKey,
    );
    return { holdId, outcome: done?.outcome ?? 'PENDING', reason: done?.reason ?? null };
  }
}
