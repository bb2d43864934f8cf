import {
  commandHash,
  decidePropose,
  decideRetract,
  decideRevise,
  parseCommand,
  ProposeCommand,
  RetractCommand,
  ReviseCommand,
  EntityRef,
  type DecideContext,
  type ResolvedEntity,
} from '../domain/commands.ts';
import { conflict, notFound } from '../domain/errors.ts';
import type { LedgerEvent } from '../domain/events.ts';
import type { EntityState, Receipt } from '../domain/fold.ts';
import type { Outcome } from '../domain/model.ts';
import type { Principal } from '../domain/principal.ts';
import type { Clock, IdSource } from '../ports/clock.ts';
import type { AsOf, GraphStore, Page, RecordQuery, RecordView, RevisionView } from '../ports/graph.ts';
import type { Ledger } from '../ports/ledger.ts';
import type { Logger } from '../ports/logger.ts';
import type { Policy } from '../ports/policy.ts';
import type { ProjectionWaiter } from './waiter.ts';

/** What a writer is told. `PENDING` means appended to the ledger but not awaited (or not yet projected). */
export interface WriteReceipt {
  readonly outcome: Outcome;
  readonly recordId: string | null;
  readonly version: number | null;
  readonly reason: string | null;
  readonly eventIds: readonly string[];
  readonly position: string | null;
}

export interface RecordsDeps {
  readonly ledger: Ledger;
  readonly store: GraphStore;
  readonly policy: Policy;
  readonly clock: Clock;
  readonly ids: IdSource;
  readonly waiter: ProjectionWaiter;
  readonly logger: Logger;
  readonly maxTextChars: number;
  readonly awaitTimeoutMs: number;
}

/** The record write and read use cases: validate → authorize → decide → append → (await) → receipt. */
export class RecordsService {
  constructor(private readonly d: RecordsDeps) {}

  async propose(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    const cmd = parseCommand(ProposeCommand, input, this.d.maxTextChars);
    await this.d.policy.checkWrite(principal, cmd.namespace);
    const hash = commandHash('propose', cmd);
    const prior = await this.priorReceipt(principal.tenant, cmd.idempotencyKey, hash);
    if (prior) return prior;
    const resolved: ResolvedEntity[] = await Promise.all(
      cmd.about.map(async (ref) => ({
        ref,
        existingId: (await this.d.store.findEntity(principal.tenant, ref))?.id,
      })),
    );
    const events = decidePropose(this.ctx(principal), cmd, resolved, 'ACTIVE');
    return this.commit(principal, cmd.idempotencyKey, hash, events, wait);
  }

  async revise(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    const cmd = parseCommand(ReviseCommand, input, this.d.maxTextChars);
    const hash = commandHash('revise', cmd);
    const prior = await this.priorReceipt(principal.tenant, cmd.idempotencyKey, hash);
    if (prior) return prior;
    const current = await this.existing(principal, cmd.id, cmd.expectedVersion);
    await this.d.policy.checkWrite(principal, current.namespace);
    return this.commit(
      principal,
      cmd.idempotencyKey,
      hash,
      [decideRevise(this.ctx(principal), cmd, current.namespace)],
      wait,
    );
  }

  async retract(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    const cmd = parseCommand(RetractCommand, input, this.d.maxTextChars);
    const hash = commandHash('retract', cmd);
    const prior = await this.priorReceipt(principal.tenant, cmd.idempotencyKey, hash);
    if (prior) return prior;
    const current = await this.existing(principal, cmd.id, cmd.expectedVersion);
    await this.d.policy.checkWrite(principal, current.namespace);
    return this.commit(
      principal,
      cmd.idempotencyKey,
      hash,
      [decideRetract(this.ctx(principal), cmd, current.namespace)],
      wait,
    );
  }

  async record(principal: Principal, id: string, asOf: AsOf): Promise<RecordView | undefined> {
    return this.d.store.record(await this.d.policy.readScope(principal, undefined), id, asOf);
  }

  async records(
    principal: Principal,
    q: RecordQuery,
    asOf: AsOf,
    first: number,
    after: string | null,
  ): Promise<Page<RecordView>> {
    const scope = await this.d.policy.readScope(principal, undefined);
    const cmdAbout = q.aboutEntityIds;
    return this.d.store.records(scope, { ...q, aboutEntityIds: cmdAbout }, asOf, first, after);
  }

  async history(principal: Principal, id: string): Promise<RevisionView[]> {
    return this.d.store.history(await this.d.policy.readScope(principal, undefined), id);
  }

  async entity(principal: Principal, ref: unknown): Promise<EntityState | undefined> {
    await this.d.policy.readScope(principal, undefined);
    return this.d.store.findEntity(principal.tenant, parseCommand(EntityRef, ref));
  }

  async entitiesByIds(principal: Principal, ids: readonly string[]): Promise<EntityState[]> {
    if (ids.length === 0) return [];
    return this.d.store.entities(await this.d.policy.readScope(principal, undefined), ids);
  }

  /** The idempotency rule: same key and same input → the original receipt; another input → CONFLICT. */
  private async priorReceipt(tenant: string, key: string, hash: string): Promise<WriteReceipt | undefined> {
    const r = await this.d.store.receipt(tenant, key);
    if (!r) return undefined;
    if (r.commandHash !== hash) throw idempotencyConflict(key);
    return settle(r, [r.eventId], null);
  }

  private async existing(principal: Principal, id: string, expectedVersion: number): Promise<RecordView> {
    const current = await this.d.store.record(await this.d.policy.readScope(principal, undefined), id);
    if (!current) throw notFound(`no record ${id}`);
    // Versions only grow, so a stale expectedVersion can be refused before it reaches the ledger.
    if (current.version !== expectedVersion) {
      throw conflict(`expected version ${expectedVersion}, current version is ${current.version}`, {
        currentVersion: current.version,
      });
    }
    return current;
  }

  private ctx(principal: Principal): DecideContext {
    return { principal, now: this.d.clock.now(), newId: () => this.d.ids.uuid() };
  }

  private async commit(
    principal: Principal,
    key: string,
    hash: string,
    events: LedgerEvent[],
    wait: boolean,
  ): Promise<WriteReceipt> {
    const positions = await this.d.ledger.append(events);
    const last = positions[positions.length - 1]!;
    const primary = events[events.length - 1]!;
    const position = `${last.partition}:${last.offset}`;
    const eventIds = events.map((e) => e.eventId);
    const recordId = 'recordId' in primary.payload ? primary.payload.recordId : null;
    this.d.logger.info(
      { op: primary.type, tenant: principal.tenant, eventId: primary.eventId, position },
      'appended',
    );
    const pending: WriteReceipt = {
      outcome: 'PENDING',
      recordId,
      version: null,
      reason: null,
      eventIds,
      position,
    };
    if (!wait) return pending;
    if (!(await this.d.waiter.waitFor(last.partition, last.offset, this.d.awaitTimeoutMs))) {
      return {
        ...pending,
        reason: 'appended to the ledger; projection has not caught up within the await timeout',
      };
    }
    const r = await this.d.store.receipt(principal.tenant, key);
    if (!r) return { ...pending, reason: 'projected, but no receipt was found' };
    if (r.eventId !== primary.eventId && r.commandHash !== hash) throw idempotencyConflict(key);
    return settle(
      r,
      r.eventId === primary.eventId ? eventIds : [r.eventId],
      r.eventId === primary.eventId ? position : null,
    );
  }
}

const idempotencyConflict = (key: string) =>
  conflict(`idempotency key ${JSON.stringify(key)} was already used with a different input`, {
    idempotencyKey: key,
  });

/** A receipt as the writer sees it; a version conflict is an error (CONFLICT) on every path. */
function settle(r: Receipt, eventIds: readonly string[], position: string | null): WriteReceipt {
  if (r.outcome === 'CONFLICT') {
    throw conflict(r.reason ?? 'version conflict', {
      currentVersion: r.version ?? -1,
      recordId: r.recordId ?? '',
    });
  }
  return {
    outcome: r.outcome,
    recordId: r.recordId,
    version: r.version,
    reason: r.reason,
    eventIds,
    position,
  };
}
