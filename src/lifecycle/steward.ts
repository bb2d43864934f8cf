import type { FindingState } from '../domain/fold.ts';
import { receiptKey } from '../domain/commands.ts';
import { canonicalJson, sha256Hex } from '../domain/canonical.ts';
import type { EventOf, LedgerEvent } from '../domain/events.ts';
import type { Principal } from '../domain/principal.ts';
import {
  candidateFindings,
  contestedFindings,
  duplicateFindings,
  lowUtilityFindings,
  orphanFindings,
  planFindings,
  staleFindings,
  type DuplicateRow,
  type StewardThresholds,
} from '../domain/stewardship.ts';
import { FindingTypes, type FindingDraft, type FindingType } from '../domain/stewardship-model.ts';
import type { Clock, IdSource } from '../ports/clock.ts';
import type { Ledger, ProjectionAwait } from '../ports/ledger.ts';
import type { Logger } from '../ports/logger.ts';
import { SerialTicker } from './serial-ticker.ts';
import type { StewardLookups } from '../ports/steward.ts';

/**
 * The steward, inside the projector process (seed 002, "Automated quality checks"): every interval it
 * runs the checks of domain/stewardship.ts over each tenant and appends what they find as ledger events —
 * `FindingRaised` for a new finding, `FindingResolved` for an open one that no longer holds — so findings
 * are rebuilt by a replay like everything else. Idempotent without state of its own: a finding's id is
 * derived from its type and ids, its events' keys from the id and how often it was raised, so a repeated
 * or concurrent run appends nothing twice, and an open finding is never raised again.
 */
export interface StewardDeps {
  readonly lookups: StewardLookups;
  readonly ledger: Pick<Ledger, 'append'>;
  readonly projection: Pick<ProjectionAwait, 'waitFor'>;
  readonly thresholds: StewardThresholds;
  /** Tenants to check; null = every tenant that holds records. */
  readonly tenants: readonly string[] | null;
  /** Wall time, for the events' recordedAt. */
  readonly clock: Clock;
  /** The "now" ages and validity are measured against: the wall clock, or a test's fake one. */
  readonly ageClock: Clock;
  readonly ids: IdSource;
  readonly awaitTimeoutMs: number;
  readonly intervalMs: number;
  readonly logger: Logger;
}

export interface StewardProgress {
  readonly runs: number;
  readonly lastRunAt: string | null;
  /** Of the last run: findings raised, resolved, and open after it (over the checked tenants). */
  readonly raised: number;
  readonly resolved: number;
  readonly open: number;
  readonly openByType: Readonly<Partial<Record<FindingType, number>>>;
}

const DAY_MS = 86_400_000;
const ALL_CHECKS: ReadonlySet<FindingType> = new Set(FindingTypes);
/** A full near-duplicate sweep every this many runs (a day at the default hourly interval). */
const FULL_SWEEP_EVERY = 24;
/** Records recorded this long before the previous run started are checked again (projection lag). */
const LAG_MARGIN_MS = 15 * 60_000;

/** Who the steward acts as: the service itself. */
const stewardPrincipal: Pick<Principal, 'iss' | 'sub'> = { iss: 'muninn', sub: 'steward' };

export class StewardScheduler {
  private state: StewardProgress = {
    runs: 0,
    lastRunAt: null,
    raised: 0,
    resolved: 0,
    open: 0,
    openByType: {},
  };

  private readonly ticker: SerialTicker<StewardProgress>;
  /** Per tenant: when the last near-duplicate check started, and runs since the last full sweep. */
  private readonly sweeps = new Map<string, { startedAt: number; runs: number }>();

  constructor(private readonly d: StewardDeps) {
    this.ticker = new SerialTicker(() => this.run(), {
      name: 'steward',
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

  progress(): StewardProgress {
    return this.state;
  }
  /** One run, after any run in flight (runs never overlap). */
  runOnce(): Promise<StewardProgress> {
    return this.ticker.runOnce();
  }

  private async run(): Promise<StewardProgress> {
    const now = this.d.ageClock.now();
    const tenants = this.d.tenants ?? (await this.d.lookups.tenants());
    let raised = 0;
    let resolved = 0;
    const openByType: Partial<Record<FindingType, number>> = {};
    for (const tenant of tenants) {
      const all = await this.d.lookups.findings(tenant);
      // A finding a reviewer dismissed stays dismissed while it holds: it is not raised again.
      const dismissed = new Set(all.filter((f) => f.dismissed).map((f) => f.id));
      const open = all.filter((f) => f.resolvedAt === null);
      const found = (await this.check(tenant, now, open)).filter((f) => !dismissed.has(f.id));
      const plan = planFindings(found, open, ALL_CHECKS);
      const prior = new Map(all.map((f) => [f.id, f]));
      const events = [
        ...plan.raise.map((f) => this.raise(tenant, f, prior.get(f.id))),
        ...plan.resolve.map((id) => this.resolve(tenant, prior.get(id)!)),
      ];
      await this.append(events);
      raised += plan.raise.length;
      resolved += plan.resolve.length;
      const gone = new Set(plan.resolve);
      for (const f of [...open.filter((x) => !gone.has(x.id)), ...plan.raise])
        openByType[f.type] = (openByType[f.type] ?? 0) + 1;
    }
    const openCount = Object.values(openByType).reduce((s, n) => s + n, 0);
    this.state = {
      runs: this.state.runs + 1,
      lastRunAt: now.toISOString(),
      raised,
      resolved,
      open: openCount,
      openByType,
    };
    this.d.logger.info(
      { event: 'steward', tenants: tenants.length, raised, resolved, open: openCount },
      'steward run',
    );
    return this.state;
  }

  /** Every check over one tenant: the rows come from the graph, the judgement from domain/stewardship.ts. */
  private async check(tenant: string, now: Date, open: readonly FindingState[]): Promise<FindingDraft[]> {
    const th = this.d.thresholds;
    const l = this.d.lookups;
    const before = (days: number) => new Date(now.getTime() - days * DAY_MS).toISOString();
    const [stale, contested, orphans, duplicates, candidates, utility] = await Promise.all([
      l.staleRows(tenant, now.toISOString()),
      l.contestedRows(tenant, before(th.contestedDays)),
      l.orphanRows(tenant),
      this.duplicates(tenant, open),
      l.candidateRows(tenant, before(th.candidateDays)),
      l.utilityRows(tenant),
    ]);
    return [
      ...staleFindings(tenant, stale, now),
      ...contestedFindings(tenant, contested, now, th),
      ...orphanFindings(tenant, orphans),
      ...duplicateFindings(tenant, duplicates, th),
      ...candidateFindings(tenant, candidates, now, th),
      ...lowUtilityFindings(tenant, utility, th),
    ];
  }

  /**
   * Near-duplicates, bounded: a full sweep (one k-NN query per live record) on the first run and every
   * FULL_SWEEP_EVERY runs; in between only records changed since the previous run started (less a margin
   * for events recorded then but projected later) are paired with the rest, and the open NEAR_DUPLICATE
   * findings are checked pair by pair, so one that no longer holds still resolves. Times are system time
   * (when records were recorded), not the age clock.
   */
  private async duplicates(tenant: string, open: readonly FindingState[]): Promise<DuplicateRow[]> {
    const l = this.d.lookups;
    const cosine = this.d.thresholds.duplicateCosine;
    const started = this.d.clock.now().getTime();
    const last = this.sweeps.get(tenant);
    const full = !last || last.runs >= FULL_SWEEP_EVERY;
    const rows = full
      ? await l.duplicateRows(tenant, cosine)
      : [
          ...(await l.duplicateRowsSince(
            tenant,
            cosine,
            new Date(last.startedAt - LAG_MARGIN_MS).toISOString(),
          )),
          ...(await l.duplicatePairs(
            tenant,
            cosine,
            open
              .filter((f) => f.type === 'NEAR_DUPLICATE' && f.recordIds.length === 2)
              .map((f) => [f.recordIds[0]!, f.recordIds[1]!] as const),
          )),
        ];
    this.sweeps.set(tenant, { startedAt: started, runs: full ? 1 : last.runs + 1 });
    return rows;
  }

  private envelope(tenant: string, namespace: string, key: string, command: object) {
    return {
      eventId: this.d.ids.uuid(),
      tenant,
      namespace,
      // Derived from the finding and how often it was raised: a repeated run is a duplicate, not a second act.
      idempotencyKey: receiptKey(stewardPrincipal, key, 'derived'),
      commandHash: sha256Hex(canonicalJson(command)),
      principal: { ...stewardPrincipal },
      actors: [],
      purpose: 'stewardship',
      changesetId: null,
      recordedAt: this.d.clock.now().toISOString(),
    };
  }

  private raise(tenant: string, f: FindingDraft, prior: FindingState | undefined): EventOf<'FindingRaised'> {
    const n = prior?.raised ?? 0;
    return {
      ...this.envelope(tenant, f.namespace, `steward:raise:${f.id}:${n}`, { kind: 'raise', id: f.id, n }),
      type: 'FindingRaised',
      schemaVersion: 1,
      payload: {
        findingId: f.id,
        findingType: f.type,
        severity: f.severity,
        recordIds: [...f.recordIds].slice(0, 64),
        entityIds: [...f.entityIds].slice(0, 64),
        reason: f.reason,
      },
    };
  }

  private resolve(tenant: string, f: FindingState): EventOf<'FindingResolved'> {
    const n = f.raised;
    return {
      ...this.envelope(tenant, f.namespace, `steward:resolve:${f.id}:${n}`, { kind: 'resolve', id: f.id, n }),
      type: 'FindingResolved',
      schemaVersion: 1,
      payload: { findingId: f.id, reason: 'no longer holds', dismissed: false },
    };
  }

  /** Appends in bounded batches and waits until the projection has applied the last one. */
  private async append(events: readonly LedgerEvent[]): Promise<void> {
    for (let i = 0; i < events.length; i += 500) {
      const positions = await this.d.ledger.append(events.slice(i, i + 500));
      const last = positions[positions.length - 1]!;
      await this.d.projection.waitFor(last.partition, last.offset, this.d.awaitTimeoutMs);
    }
  }
}
