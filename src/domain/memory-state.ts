import { canonicalJson } from './canonical.ts';
import type { LedgerEvent } from './events.ts';
import { scrubbedReceipt } from './erasure-fold.ts';
import type { Classification } from './reclassify.ts';
import {
  evolve,
  type Erasure,
  type EntityState,
  type EpisodeState,
  type GrantState,
  type ProjectionView,
  type Receipt,
  type RecordState,
  type RevisionState,
  type HoldState,
  type FindingState,
} from './fold.ts';

const k = (tenant: string, id: string): string => `${tenant}\u0000${id}`;

/**
 * Projected state held in memory: a ProjectionView that folds events and remembers what changed.
 * The projector seeds one per batch from the graph; tests fold a whole log into one to know what the
 * graph must hold.
 */
export class MemoryState implements ProjectionView {
  private readonly records = new Map<string, RecordState>();
  private readonly entities = new Map<string, EntityState>();
  private readonly receipts = new Map<string, Receipt>();
  private readonly episodes = new Map<string, EpisodeState>();
  private readonly grants = new Map<string, GrantState>();
  private readonly holds = new Map<string, HoldState>();
  private readonly findings = new Map<string, FindingState>();
  private readonly dirty = {
    records: new Map<string, RecordState>(),
    entities: new Map<string, EntityState>(),
    receipts: new Map<string, Receipt>(),
    episodes: new Map<string, EpisodeState>(),
    grants: new Map<string, GrantState>(),
    erasures: [] as Erasure[],
    holds: new Map<string, HoldState>(),
    findings: new Map<string, FindingState>(),
  };

  /** The records as loaded, to tell which of their revisions a batch changed (`changes`). */
  private readonly loaded = new Map<string, RecordState>();

  constructor(seed?: {
    records?: readonly RecordState[];
    entities?: readonly EntityState[];
    receipts?: readonly Receipt[];
    episodes?: readonly EpisodeState[];
    grants?: readonly GrantState[];
    holds?: readonly HoldState[];
    findings?: readonly FindingState[];
  }) {
    for (const r of seed?.records ?? []) {
      this.records.set(k(r.tenant, r.id), r);
      this.loaded.set(k(r.tenant, r.id), r);
    }
    for (const e of seed?.entities ?? []) this.entities.set(k(e.tenant, e.id), e);
    for (const r of seed?.receipts ?? []) this.receipts.set(k(r.tenant, r.idempotencyKey), r);
    for (const e of seed?.episodes ?? []) this.episodes.set(k(e.tenant, e.id), e);
    for (const g of seed?.grants ?? []) this.grants.set(k(g.tenant, g.id), g);
    for (const h of seed?.holds ?? []) this.holds.set(k(h.tenant, h.id), h);
    for (const f of seed?.findings ?? []) this.findings.set(k(f.tenant, f.id), f);
  }

  record = (tenant: string, id: string): RecordState | undefined => this.records.get(k(tenant, id));
  entity = (tenant: string, id: string): EntityState | undefined => this.entities.get(k(tenant, id));
  receipt = (tenant: string, key: string): Receipt | undefined => this.receipts.get(k(tenant, key));
  episode = (tenant: string, id: string): EpisodeState | undefined => this.episodes.get(k(tenant, id));
  grant = (tenant: string, id: string): GrantState | undefined => this.grants.get(k(tenant, id));
  hold = (tenant: string, id: string): HoldState | undefined => this.holds.get(k(tenant, id));
  finding = (tenant: string, id: string): FindingState | undefined => this.findings.get(k(tenant, id));

  apply(event: LedgerEvent): void {
    const eff = evolve(this, event);
    for (const r of [...(eff.record ? [eff.record] : []), ...(eff.others ?? [])])
      this.put(this.records, this.dirty.records, k(r.tenant, r.id), stampRevisions(r, event));
    if (eff.entity)
      this.put(this.entities, this.dirty.entities, k(eff.entity.tenant, eff.entity.id), eff.entity);
    if (eff.episode)
      this.put(this.episodes, this.dirty.episodes, k(eff.episode.tenant, eff.episode.id), eff.episode);
    if (eff.grant) this.put(this.grants, this.dirty.grants, k(eff.grant.tenant, eff.grant.id), eff.grant);
    if (eff.erasure) this.erase(eff.erasure);
    if (eff.hold) this.put(this.holds, this.dirty.holds, k(eff.hold.tenant, eff.hold.id), eff.hold);
    if (eff.finding)
      this.put(this.findings, this.dirty.findings, k(eff.finding.tenant, eff.finding.id), eff.finding);
    if (eff.receipt)
      this.put(
        this.receipts,
        this.dirty.receipts,
        k(eff.receipt.tenant, eff.receipt.idempotencyKey),
        eff.receipt,
      );
  }

  /**
   * Everything the applied events changed, each once, in its final state; and, for each changed record
   * that was loaded, the revisions that are still as loaded.
   */
  changes(): {
    records: RecordState[];
    unchangedRevisions: Map<RecordState, Set<number>>;
    entities: EntityState[];
    receipts: Receipt[];
    episodes: EpisodeState[];
    grants: GrantState[];
    erasures: Erasure[];
    holds: HoldState[];
    findings: FindingState[];
  } {
    return {
      erasures: [...this.dirty.erasures],
      holds: [...this.dirty.holds.values()],
      findings: [...this.dirty.findings.values()],
      records: [...this.dirty.records.values()],
      unchangedRevisions: this.unchangedRevisions(),
      entities: [...this.dirty.entities.values()],
      receipts: [...this.dirty.receipts.values()],
      episodes: [...this.dirty.episodes.values()],
      grants: [...this.dirty.grants.values()],
    };
  }

  /** Node counts by label, as the graph would hold them. */
  counts(): Record<string, number> {
    let revisions = 0;
    let chunks = 0;
    for (const r of this.records.values()) revisions += r.revisions.length;
    for (const e of this.episodes.values()) chunks += e.chunks.length;
    const out: Record<string, number> = {
      Record: this.records.size,
      Revision: revisions,
      Entity: this.entities.size,
      Receipt: this.receipts.size,
      Episode: this.episodes.size,
      Chunk: chunks,
      Grant: this.grants.size,
      Finding: this.findings.size,
    };
    return Object.fromEntries(Object.entries(out).filter(([, n]) => n > 0));
  }

  /**
   * The receipts this state holds of the erased record's earlier events lose their reasons; the graph
   * writer does the same for receipts of earlier batches (before it writes this batch's), so the result
   * does not depend on where batch boundaries fall.
   */
  private erase(x: Erasure): void {
    this.dirty.erasures.push(x);
    if (x.target !== 'RECORD') return;
    for (const [key, r] of this.receipts)
      if (r.tenant === x.tenant && r.recordId === x.id && r.reason !== null)
        this.put(this.receipts, this.dirty.receipts, key, scrubbedReceipt(r));
  }

  private unchangedRevisions(): Map<RecordState, Set<number>> {
    const out = new Map<RecordState, Set<number>>();
    for (const [key, r] of this.dirty.records) {
      const before = this.loaded.get(key);
      if (!before) continue;
      const was = new Map(before.revisions.map((v) => [v.version, v]));
      const same = r.revisions.filter((v) => sameRevision(was.get(v.version), v)).map((v) => v.version);
      if (same.length) out.set(r, new Set(same));
    }
    return out;
  }

  private put<T>(all: Map<string, T>, dirty: Map<string, T>, key: string, v: T): void {
    all.set(key, v);
    dirty.set(key, v);
  }
}

/**
 * Who made each revision and with which event type, on the revisions this event opened: a rollback
 * (rollback-plan.ts) tells a later person's change from the reverted one's own follow-ups by these.
 */
function stampRevisions(r: RecordState, e: LedgerEvent): RecordState {
  // Always overwritten: a revision built by spreading the previous one carries that one's stamp.
  const by = `${e.principal.iss}|${e.principal.sub}`;
  const classification = { class: r.class, sensitivity: r.sensitivity, namespace: r.namespace };
  const mine = (v: RecordState['revisions'][number]) =>
    v.eventId === e.eventId &&
    (v.by !== by || v.cause !== e.type || !sameClassification(v.classification, classification));
  if (!r.revisions.some(mine)) return r;
  return {
    ...r,
    revisions: r.revisions.map((v) => (mine(v) ? { ...v, by, cause: e.type, classification } : v)),
  };
}

/** The fold keeps an untouched revision's object; the canonical form also catches an equal copy. */
const sameRevision = (a: RevisionState | undefined, b: RevisionState): boolean =>
  a !== undefined && (a === b || canonicalJson(a) === canonicalJson(b));

const sameClassification = (a: Classification | null | undefined, b: Classification): boolean =>
  !!a && a.class === b.class && a.sensitivity === b.sensitivity && a.namespace === b.namespace;
