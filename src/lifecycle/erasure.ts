import { z } from 'zod';
import { canonicalJson, sha256Hex } from '../domain/canonical.ts';
import { receiptKey } from '../domain/commands.ts';
import { badInput, conflict, forbidden, notFound } from '../domain/errors.ts';
import type { EventOf } from '../domain/events.ts';
import type { Receipt } from '../domain/fold.ts';
import { NamespacePath } from '../domain/model.ts';
import { hasScope, principalKey, type Principal } from '../domain/principal.ts';
import { holdsCovering } from '../domain/retention.ts';
import { keyIdOf } from '../domain/sealing.ts';
import type { Clock, IdSource } from '../ports/clock.ts';
import type { ErasureItem, ErasureLookups, ErasureSelector, HoldView } from '../ports/erasure.ts';
import type { IngestLookups } from '../ports/ingest-lookups.ts';
import type { KeyStore } from '../ports/key-store.ts';
import type { Ledger, ProjectionAwait } from '../ports/ledger.ts';
import type { Logger } from '../ports/logger.ts';
import type { TokenVerifier } from '../ports/token-verifier.ts';

/**
 * `erase`: crypto-shredding of a data subject, a record or a namespace. Order matters and each step is
 * safe to repeat (the same idempotency key resumes where a crash left off):
 * 1. plan (which records, entities, episodes) → 2. append one `Erased` tombstone per item → 3. wait for
 * the projection (it overwrites their personal data in the graph) → 4. destroy their data keys (no
 * ledger copy, backup or replay can open them again) → 5. check the graph, the keys and the ledger and
 * return a proof-of-removal receipt. Were a crash to land between 2 and 4, the retry destroys the keys.
 */
export const EraseCommand = z
  .object({
    subject: z
      .object({
        id: z.string().min(1).max(200).optional(),
        alias: z.string().min(1).max(500).optional(),
        externalId: z.string().min(1).max(500).optional(),
      })
      .refine((s) => s.id ?? s.alias ?? s.externalId, 'name the subject by id, alias or externalId')
      .optional(),
    recordId: z.string().min(1).max(200).optional(),
    namespace: NamespacePath.optional(),
    reason: z.string().trim().min(1).max(2000),
    idempotencyKey: z.string().min(1).max(200),
    /** A second admin's bearer token, when the configuration asks for a second approver. */
    approverToken: z.string().min(1).max(8192).optional(),
  })
  .strict()
  .refine(
    (c) => [c.subject, c.recordId, c.namespace].filter((x) => x !== undefined).length === 1,
    'name exactly one of subject, recordId, namespace',
  );
export type EraseCommand = z.infer<typeof EraseCommand>;

export interface ErasureCheck {
  readonly store: 'graph' | 'keys' | 'ledger';
  readonly ok: boolean;
  readonly detail: string;
}

/** Proof of removal: what was erased, when, by whom, and what was checked afterwards. */
export interface ErasureReceipt {
  readonly erasureId: string;
  readonly requestedBy: string;
  readonly approvedBy: string | null;
  readonly reason: string;
  readonly erasedAt: string;
  readonly records: number;
  readonly entities: number;
  readonly episodes: number;
  readonly ids: readonly string[];
  readonly checks: readonly ErasureCheck[];
}

export interface ErasureDeps {
  readonly ledger: Pick<Ledger, 'append'>;
  readonly keys: KeyStore;
  readonly lookups: ErasureLookups;
  readonly store: Pick<IngestLookups, 'receiptsByPrefix'>;
  readonly projection: ProjectionAwait;
  /** Verifies a second approver's token (same issuer and audience as every caller's). */
  readonly verifier: TokenVerifier;
  /** Admins besides the caller who must approve (MUNINN_ERASE_APPROVERS). */
  readonly approvers: number;
  /**
   * The one screening pass of a command (ingest/screen-command.ts), before anything else reads it: a
   * secret in an identifier refuses it, one in the reason becomes a SecretRef (the reason is stored in clear).
   */
  readonly screen: (command: 'erase' | 'placeHold' | 'releaseHold', input: unknown) => unknown;
  readonly clock: Clock;
  readonly ids: IdSource;
  readonly awaitTimeoutMs: number;
  readonly logger: Logger;
}

export class ErasureService {
  constructor(private readonly d: ErasureDeps) {}

  async erase(principal: Principal, input: unknown): Promise<ErasureReceipt> {
    if (!hasScope(principal, 'admin')) throw forbidden('the admin scope is required to erase');
    const parsed = EraseCommand.safeParse(input);
    if (!parsed.success) throw badInput(parsed.error.issues.map((i) => i.message).join('; '));
    const cmd = this.d.screen('erase', parsed.data) as EraseCommand;
    const approver = await this.secondApprover(principal, cmd.approverToken);
    return this.run(principal, selectorOf(cmd), cmd.reason, cmd.idempotencyKey, approver);
  }

  /**
   * Retention's erasure (lifecycle/retention.ts): the configured rule stands in for the request and its
   * approval; planning, holds, tombstones, keys and the proof are the same as for `erase`.
   */
  eraseByRule(
    system: Principal,
    selector: ErasureSelector,
    reason: string,
    idempotencyKey: string,
  ): Promise<ErasureReceipt> {
    return this.run(system, selector, reason, idempotencyKey, null);
  }

  private async run(
    principal: Principal,
    selector: ErasureSelector,
    reason: string,
    key: string,
    approver: Principal | null,
  ): Promise<ErasureReceipt> {
    const base = receiptKey(principal, key, 'user');
    const hash = sha256Hex(canonicalJson({ kind: 'erase', selector, reason }));
    const done = await this.d.store.receiptsByPrefix(principal.tenant, `${base}#erase`);
    if (done.some((r) => r.commandHash !== hash))
      throw conflict('this idempotency key was used for another erasure');
    // A retry resumes from the tombstones' receipts (the plan would find nothing: the names are gone).
    const items = done.length
      ? done.flatMap(itemOfReceipt)
      : await this.d.lookups.plan(principal.tenant, selector);
    if (!items.length) throw notFound('nothing to erase: no such subject, record or namespace');
    const holds = blocking(await this.d.lookups.holds(principal.tenant, false), items);
    if (holds.length)
      throw conflict('under legal hold: release the hold first', { holds: holds.map((h) => h.id) });
    const erasedAt = done[0]?.recordedAt ?? this.d.clock.now().toISOString();
    if (!done.length)
      await this.appendAndWait(this.tombstones(principal, reason, items, base, hash, erasedAt));
    await this.d.keys.destroy(items.map(keyOf(principal.tenant)));
    const erasureId = sha256Hex(base).slice(0, 32);
    const receipt: ErasureReceipt = {
      erasureId,
      requestedBy: principalKey(principal),
      approvedBy: approver ? principalKey(approver) : null,
      reason,
      erasedAt,
      records: items.filter((i) => i.target === 'RECORD').length,
      entities: items.filter((i) => i.target === 'ENTITY').length,
      episodes: items.filter((i) => i.target === 'EPISODE').length,
      ids: items.map((i) => i.id),
      checks: await this.checks(principal.tenant, items),
    };
    this.d.logger.info(
      { event: 'erasure', erasureId, items: items.length, requestedBy: receipt.requestedBy },
      'erased',
    );
    return receipt;
  }

  /** The second admin, when the configuration asks for one: another person, not the caller's agent. */
  private async secondApprover(p: Principal, token: string | undefined): Promise<Principal | null> {
    if (this.d.approvers === 0) return null;
    if (!token) throw forbidden('this erasure needs a second admin: pass approverToken');
    let a: Principal;
    try {
      a = await this.d.verifier.verify(token);
    } catch {
      throw forbidden('the approver token is not valid');
    }
    const parties = [principalKey(p), ...p.actors.map((x) => `${x.iss ?? ''}|${x.sub}`)];
    if (a.tenant !== p.tenant || !hasScope(a, 'admin'))
      throw forbidden('the approver must be an admin of this tenant');
    if (
      parties.includes(principalKey(a)) ||
      a.actors.some((x) => parties.includes(`${x.iss ?? ''}|${x.sub}`))
    )
      throw forbidden('the approver must be someone other than the requester and its agents');
    return a;
  }

  private tombstones(
    p: Principal,
    reason: string,
    items: ErasureItem[],
    base: string,
    hash: string,
    now: string,
  ): EventOf<'Erased'>[] {
    const erasureId = sha256Hex(base).slice(0, 32);
    return items.map((it, i) => ({
      eventId: this.d.ids.uuid(),
      type: 'Erased',
      schemaVersion: 1,
      tenant: p.tenant,
      namespace: it.namespace,
      idempotencyKey: `${base}#erase${i}`,
      commandHash: hash,
      principal: { iss: p.iss, sub: p.sub },
      actors: p.actors.map((a) => ({ iss: a.iss ?? null, sub: a.sub })),
      purpose: 'erasure',
      changesetId: null,
      recordedAt: now,
      payload: { target: it.target, id: it.id, erasureId, reason },
    }));
  }

  private async appendAndWait(events: EventOf<'Erased'>[]): Promise<void> {
    const positions = await this.d.ledger.append(events);
    const last = positions[positions.length - 1]!;
    const ok = await this.d.projection.waitFor(last.partition, last.offset, this.d.awaitTimeoutMs);
    // Not yet projected: the keys go anyway; the projector then sees only markers, and the graph check says so.
    if (!ok) this.d.logger.warn({ event: 'erasure_projection_pending' }, 'erasure not yet projected');
  }

  private async checks(tenant: string, items: ErasureItem[]): Promise<ErasureCheck[]> {
    const left = await this.d.lookups.remaining(tenant, items);
    const states = await Promise.all(items.map((i) => this.d.keys.state(keyOf(tenant)(i))));
    const alive = states.filter((s) => s === 'ACTIVE').length;
    const opened = await Promise.all(items.map((i) => this.d.keys.forOpening(keyOf(tenant)(i))));
    const openable = opened.filter((k) => k !== null).length;
    return [
      {
        store: 'graph',
        ok: left.length === 0,
        detail: left.length
          ? `${left.length} item(s) still hold personal data: ${left.slice(0, 5).join(', ')}`
          : `no text, embedding, span, alias or chunk left on ${items.length} item(s)`,
      },
      {
        store: 'keys',
        ok: alive === 0,
        detail: `${items.length - alive} of ${items.length} data key(s) destroyed`,
      },
      {
        store: 'ledger',
        ok: openable === 0,
        detail: `sealed payloads of ${items.length - openable} of ${items.length} item(s) can no longer be opened`,
      },
    ];
  }
}

const keyOf =
  (tenant: string) =>
  (i: ErasureItem): string =>
    keyIdOf(tenant, i.target === 'RECORD' ? 'record' : i.target === 'ENTITY' ? 'entity' : 'episode', i.id);

function selectorOf(c: EraseCommand): ErasureSelector {
  if (c.recordId) return { kind: 'RECORD', recordId: c.recordId };
  if (c.namespace) return { kind: 'NAMESPACE', namespace: c.namespace };
  return { kind: 'SUBJECT', subject: c.subject ?? {} };
}

/** The standing holds that cover any of the items. */
const blocking = (holds: readonly HoldView[], items: readonly ErasureItem[]): HoldView[] =>
  holds.filter((h) =>
    items.some(
      (i) => holdsCovering([h], { record: i.target === 'RECORD', id: i.id, namespace: i.namespace }).length,
    ),
  );

/** A tombstone's receipt names its item (ids only): `erased RECORD <id>`; see erasure-fold.ts. */
function itemOfReceipt(r: Receipt): ErasureItem[] {
  const m = /^erased (RECORD|ENTITY|EPISODE) (\S+) in (\S+)$/.exec(r.reason ?? '');
  return m ? [{ target: m[1] as ErasureItem['target'], id: m[2]!, namespace: m[3]! }] : [];
}
