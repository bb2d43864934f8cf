import { receiptKey } from '../domain/commands.ts';
import { canonicalJson, sha256Hex } from '../domain/canonical.ts';
import { MuninnError } from '../domain/errors.ts';
import type { EventOf } from '../domain/events.ts';
import type { Principal } from '../domain/principal.ts';
import {
  due,
  type HoldScope,
  type RetentionCandidate,
  type RetentionDecision,
  type RetentionRule,
} from '../domain/retention.ts';
import { keyIdOf } from '../domain/sealing.ts';
import type { Clock, IdSource } from '../ports/clock.ts';
import type { ErasureLookups, RetentionLookups } from '../ports/erasure.ts';
import type { KeyStore } from '../ports/key-store.ts';
import type { Ledger, ProjectionAwait } from '../ports/ledger.ts';
import type { Logger } from '../ports/logger.ts';
import { errName, SerialTicker } from './serial-ticker.ts';
import type { ErasureService } from './erasure.ts';

/**
 * The retention scheduler, inside the projector process: every interval it asks domain/retention.ts which
 * records are due, then archives them (`RecordArchived`) and erases them (the same erasure as `erase`,
 * holds, tombstones, key destruction and all). Idempotent and resumable without state of its own: each
 * act has a key derived from the record (and its version), so a repeated or interrupted run appends
 * nothing twice, and what is due is read afresh from the graph, where done work no longer shows up (an
 * erasure cut short shows as ERASED with its key alive, and is finished). Progress is logged per run
 * and readable from `progress()`.
 */
export interface RetentionDeps {
  readonly rules: readonly RetentionRule[];
  readonly lookups: RetentionLookups & Pick<ErasureLookups, 'holds'>;
  readonly ledger: Pick<Ledger, 'append'>;
  readonly projection: ProjectionAwait;
  readonly erasure: Pick<ErasureService, 'eraseByRule'>;
  readonly keys: Pick<KeyStore, 'state'>;
  /** Wall time, for the events' recordedAt. */
  readonly clock: Clock;
  /** The "now" records' ages are measured against: the wall clock, or a test's fake one. */
  readonly ageClock: Clock;
  readonly ids: IdSource;
  readonly awaitTimeoutMs: number;
  readonly intervalMs: number;
  readonly logger: Logger;
}

export interface RetentionProgress {
  readonly runs: number;
  readonly running: boolean;
  /** The age clock's time (see RetentionDeps) of the last run that finished. */
  readonly lastRunAt: string | null;
  /** Of the current run while one is running, else of the last one. */
  readonly due: number;
  readonly archived: number;
  readonly erased: number;
  readonly held: number;
  readonly failed: number;
  /** The records a standing hold kept from their due action in that run. */
  readonly heldRecords: readonly string[];
}

const DAY_MS = 86_400_000;
type Candidate = RetentionCandidate & { readonly version: number };

/** Who retention acts as: the service itself, with the admin scope its rules stand in for. */
const systemPrincipal = (tenant: string): Principal => ({
  iss: 'muninn',
  sub: 'retention',
  tenant,
  scopes: new Set(['admin']),
  actors: [],
  tokenId: undefined,
  expiresAt: undefined,
});

export class RetentionScheduler {
  private state: RetentionProgress = {
    runs: 0,
    running: false,
    lastRunAt: null,
    due: 0,
    archived: 0,
    erased: 0,
    held: 0,
    failed: 0,
    heldRecords: [],
  };

  private readonly ticker: SerialTicker<RetentionProgress>;

  constructor(private readonly d: RetentionDeps) {
    this.ticker = new SerialTicker(() => this.run(), {
      name: 'retention',
      intervalMs: d.intervalMs,
      logger: d.logger,
    });
  }

  /** Runs now, then every interval; a tick while a run is in flight waits for it. */
  start(): void {
    this.ticker.start();
  }

  stop(): Promise<void> {
    return this.ticker.stop();
  }

  progress(): RetentionProgress {
    return this.state;
  }
  /** One run, after any run in flight (runs never overlap). */
  runOnce(): Promise<RetentionProgress> {
    return this.ticker.runOnce();
  }

  private async run(): Promise<RetentionProgress> {
    const now = this.d.ageClock.now();
    const holds = new Map<string, HoldScope[]>();
    const candidates: Candidate[] = [];
    for (const tenant of new Set(this.d.rules.map((r) => r.tenant))) {
      holds.set(tenant, await this.d.lookups.holds(tenant, false));
      candidates.push(...(await this.candidates(tenant, now)));
    }
    const plan = due(this.d.rules, candidates, (t) => holds.get(t) ?? [], now);
    this.set({
      running: true,
      due: plan.due.length,
      archived: 0,
      erased: 0,
      held: plan.held.length,
      failed: 0,
      heldRecords: plan.held.map((h) => h.recordId),
    });
    const version = new Map(candidates.map((c) => [`${c.tenant}|${c.id}`, c.version]));
    await this.archive(
      plan.due.filter((x) => x.action === 'ARCHIVE'),
      (x) => version.get(`${x.tenant}|${x.recordId}`)!,
    );
    for (const x of plan.due.filter((y) => y.action === 'ERASE')) await this.erase(x);
    this.set({ running: false, runs: this.state.runs + 1, lastRunAt: now.toISOString() });
    const { runs, due: n, archived, erased, held, failed } = this.state;
    this.d.logger.info({ event: 'retention', runs, due: n, archived, erased, held, failed }, 'retention run');
    return this.state;
  }

  /** The records old enough for some rule of the tenant, once each; ERASED ones say if their key is alive. */
  private async candidates(tenant: string, now: Date): Promise<Candidate[]> {
    const byId = new Map<string, Candidate>();
    for (const r of this.d.rules.filter((x) => x.tenant === tenant)) {
      const days = Math.min(r.archiveAfterDays ?? Infinity, r.eraseAfterDays ?? Infinity);
      const cutoff = new Date(now.getTime() - days * DAY_MS).toISOString();
      for (const c of await this.d.lookups.candidates(tenant, r.namespace, cutoff)) byId.set(c.id, c);
    }
    const out: Candidate[] = [];
    for (const c of byId.values()) {
      if (c.status !== 'ERASED') out.push(c);
      else if ((await this.d.keys.state(keyIdOf(tenant, 'record', c.id))) === 'ACTIVE')
        out.push({ ...c, keyActive: true });
    }
    return out;
  }

  private async archive(xs: RetentionDecision[], versionOf: (x: RetentionDecision) => number) {
    if (!xs.length) return;
    const events = xs.map((x): EventOf<'RecordArchived'> => {
      const p = systemPrincipal(x.tenant);
      const expectedVersion = versionOf(x);
      return {
        eventId: this.d.ids.uuid(),
        type: 'RecordArchived',
        schemaVersion: 1,
        tenant: x.tenant,
        namespace: x.namespace,
        // Derived from the record and the version it archives: a repeated run is a duplicate, not a second act.
        idempotencyKey: receiptKey(p, `retention:archive:${x.recordId}:v${expectedVersion}`, 'derived'),
        commandHash: sha256Hex(
          canonicalJson({ kind: 'retention-archive', recordId: x.recordId, expectedVersion }),
        ),
        principal: { iss: p.iss, sub: p.sub },
        actors: [],
        purpose: 'retention',
        changesetId: null,
        recordedAt: this.d.clock.now().toISOString(),
        payload: { recordId: x.recordId, expectedVersion, reason: x.rule },
      };
    });
    const positions = await this.d.ledger.append(events);
    const last = positions[positions.length - 1]!;
    await this.d.projection.waitFor(last.partition, last.offset, this.d.awaitTimeoutMs);
    this.set({ archived: events.length });
  }

  private async erase(x: RetentionDecision): Promise<void> {
    const p = systemPrincipal(x.tenant);
    try {
      await this.d.erasure.eraseByRule(
        p,
        { kind: 'RECORD', recordId: x.recordId },
        x.rule,
        `retention:erase:${x.recordId}`,
      );
      this.set({ erased: this.state.erased + 1 });
    } catch (e) {
      // A hold placed since the plan was made: CONFLICT, and the record waits like any held one.
      if (e instanceof MuninnError && e.code === 'CONFLICT')
        this.set({ held: this.state.held + 1, heldRecords: [...this.state.heldRecords, x.recordId] });
      else {
        this.set({ failed: this.state.failed + 1 });
        this.d.logger.warn(
          { event: 'retention_erase_failed', recordId: x.recordId, err: errName(e) },
          'retention erase failed',
        );
      }
    }
  }

  private set(patch: Partial<RetentionProgress>): void {
    this.state = { ...this.state, ...patch };
  }
}
