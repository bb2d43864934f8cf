import { z } from 'zod';
import { EntityRef, parseCommand } from '../domain/commands.ts';
import { forbidden } from '../domain/errors.ts';
import { NamespacePath } from '../domain/model.ts';
import type { EntityState, GrantState } from '../domain/fold.ts';
import type { Policy } from '../domain/policy.ts';
import { hasScope, type Principal, type Reader } from '../domain/principal.ts';
import type {
  AsOf,
  RecordReads,
  Page,
  Proposal,
  RecordQuery,
  RecordView,
  RevisionView,
} from '../ports/graph.ts';

const NamespaceFilter = z.object({ namespace: NamespacePath });
/** A read's namespace is checked and case-folded like a command's (NamespacePath): BAD_USER_INPUT if invalid. */
const readNamespace = (namespace: string): string => parseCommand(NamespaceFilter, { namespace }).namespace;

/** The read side of records: every read takes the caller's ReadScope into its query. */
export class RecordsService {
  constructor(
    private readonly store: RecordReads,
    private readonly policy: Policy,
  ) {}

  async record(principal: Reader, id: string, asOf: AsOf): Promise<RecordView | undefined> {
    return this.store.record(await this.policy.readScope(principal, principal.purpose), id, asOf);
  }

  async records(
    principal: Reader,
    q: RecordQuery,
    asOf: AsOf,
    first: number,
    after: string | null,
  ): Promise<Page<RecordView>> {
    const query = { ...q, namespace: readNamespace(q.namespace) };
    return this.store.records(
      await this.policy.readScope(principal, principal.purpose),
      query,
      asOf,
      first,
      after,
    );
  }

  async recordCount(principal: Reader, q: RecordQuery, asOf: AsOf): Promise<number> {
    const query = { ...q, namespace: readNamespace(q.namespace) };
    return this.store.recordCount(await this.policy.readScope(principal, principal.purpose), query, asOf);
  }

  async history(principal: Reader, id: string): Promise<RevisionView[]> {
    return this.store.history(await this.policy.readScope(principal, principal.purpose), id);
  }

  async entity(principal: Reader, ref: unknown): Promise<EntityState | undefined> {
    // Only among the entities the caller may see (see RecordReads.entities): a hidden entity with the
    // same alias neither answers nor shadows a visible one.
    const scope = await this.policy.readScope(principal, principal.purpose);
    return this.store.findEntity(scope, parseCommand(EntityRef, ref));
  }

  async entitiesByIds(principal: Reader, ids: readonly string[]): Promise<EntityState[]> {
    if (ids.length === 0) return [];
    return this.store.entities(await this.policy.readScope(principal, principal.purpose), ids);
  }

  async relations(principal: Reader, id: string) {
    return this.store.relations(await this.policy.readScope(principal, principal.purpose), id);
  }

  /** The tenant's namespace grants (admin only). */
  async grants(principal: Principal): Promise<GrantState[]> {
    if (!hasScope(principal, 'admin')) throw forbidden('the admin scope is required to list grants');
    return this.store.grants(principal.tenant);
  }

  /** Proposals waiting in a namespace subtree; needs the review scope. */
  async reviewQueue(
    principal: Principal,
    namespace: string,
    first: number,
    after: string | null,
  ): Promise<Page<Proposal>> {
    const ns = readNamespace(namespace);
    await this.policy.checkReview(principal, ns);
    return this.store.reviewQueue(await this.policy.readScope(principal, 'review'), ns, first, after);
  }
}
