import { badInput } from '../domain/errors.ts';
import type { EntityState } from '../domain/fold.ts';
import type { Policy } from '../domain/policy.ts';
import type { Principal } from '../domain/principal.ts';
import type {
  AnalyticsReads,
  Change,
  ChangeQuery,
  CountBucket,
  RecordCounts,
  RecordLink,
} from '../ports/analytics.ts';
import type { AsOf, Page, RecordQuery, RecordReads, RecordView } from '../ports/graph.ts';

/**
 * Competency queries for analysts (complete, not ranked). Each takes the caller's ReadScope from the one
 * policy — without a purpose, like every structured read — and hands it to a query that compiles it.
 */
export class AnalyticsService {
  constructor(
    private readonly store: Pick<RecordReads, 'entities' | 'recordsByIds'>,
    private readonly reads: AnalyticsReads,
    private readonly policy: Policy,
  ) {}

  private scope(principal: Principal) {
    return this.policy.readScope(principal, undefined);
  }

  async recordCounts(principal: Principal, q: RecordQuery, asOf: AsOf): Promise<RecordCounts> {
    return this.reads.recordCounts(await this.scope(principal), q, asOf);
  }

  /**
   * The entity (when the caller may see it) and its SAME_AS entities the caller may see; the records are
   * those about any of them (see `neighbourhoodQuery`).
   */
  async neighbourhood(
    principal: Principal,
    entity: EntityState,
  ): Promise<{ entity: EntityState; sameAs: EntityState[] }> {
    const scope = await this.scope(principal);
    const ids = await this.reads.sameAs(principal.tenant, entity.id);
    const sameAs = ids.length ? await this.store.entities(scope, ids) : [];
    return { entity, sameAs: [...sameAs].sort((a, b) => a.id.localeCompare(b.id)) };
  }

  /** Records by id as the caller may read them now (invisible ones are left out). */
  async records(principal: Principal, ids: readonly string[]): Promise<RecordView[]> {
    if (ids.length === 0) return [];
    return this.store.recordsByIds(await this.scope(principal), ids);
  }

  async linksAmong(principal: Principal, q: RecordQuery, asOf: AsOf): Promise<RecordLink[]> {
    return this.reads.linksAmong(await this.scope(principal), q, asOf);
  }

  async changes(
    principal: Principal,
    q: ChangeQuery,
    first: number,
    after: string | null,
  ): Promise<Page<Change>> {
    checkWindow(q);
    return this.reads.changes(await this.scope(principal), q, first, after);
  }

  async changeCounts(principal: Principal, q: ChangeQuery): Promise<CountBucket[]> {
    checkWindow(q);
    return this.reads.changeCounts(await this.scope(principal), q);
  }
}

function checkWindow(q: ChangeQuery): void {
  if (Date.parse(q.from) >= Date.parse(q.to)) throw badInput('from must be before to');
}
