import type { IResolvers } from '@graphql-tools/utils';
import type { Principal } from '../domain/principal.ts';
import type { ChangeQuery, CountBucket, RecordLink } from '../ports/analytics.ts';
import type { RecordStatus } from '../domain/model.ts';
import type { AsOf, RecordQuery } from '../ports/graph.ts';
import type { ApiContext } from './context.ts';
import { asOfArg, dropNulls, pageSize, recordQuery, revision, type Args } from './resolver-args.ts';
import type { ApiServices } from './services.ts';

/** A neighbourhood's parent for its field resolvers: the query its records and relations share. */
interface NeighbourhoodParent {
  readonly principal: Principal;
  readonly query: RecordQuery;
  readonly asOf: AsOf;
}

/** The analysts' competency queries (schema.graphql, "Analytics"). Thin: the services hold the rules. */
export function buildAnalyticsResolvers(s: ApiServices): IResolvers<unknown, ApiContext> {
  const withPrincipal = (p: Principal) => (r: object) => ({ ...r, principal: p });
  return {
    Query: {
      recordCounts: (_: unknown, a: Args, ctx: ApiContext) => recordCounts(s, ctx.principal, a),
      neighbourhood: (_: unknown, a: Args, ctx: ApiContext) => neighbourhood(s, ctx.principal, a),
      changes: (_: unknown, a: Args, ctx: ApiContext) =>
        changeConnection(
          s,
          ctx.principal,
          changeQuery(a),
          pageSize(a['first']),
          (a['after'] as string | null) ?? null,
        ),
    },
    Neighbourhood: {
      records: async (p: NeighbourhoodParent, a: Args) => {
        const page = await s.records.records(
          p.principal,
          p.query,
          p.asOf,
          pageSize(a['first']),
          (a['after'] as string | null | undefined) ?? null,
        );
        return {
          nodes: page.items.map(withPrincipal(p.principal)),
          pageInfo: { endCursor: page.endCursor, hasNextPage: page.hasNextPage },
          totalCount: () => s.records.recordCount(p.principal, p.query, p.asOf),
        };
      },
      relations: async (p: NeighbourhoodParent) =>
        (await s.analytics.linksAmong(p.principal, p.query, p.asOf)).map(link),
    },
  };
}

async function recordCounts(s: ApiServices, principal: Principal, a: Args) {
  const query = await recordQuery(s, principal, a['filter']);
  const counts = await s.analytics.recordCounts(principal, query, asOfArg(a['asOf']));
  // Every entity counted is about a record the caller may read, so each is visible to it.
  const entities = new Map(
    (
      await s.records.entitiesByIds(
        principal,
        counts.byEntity.map((b) => b.key),
      )
    ).map((e) => [e.id, e]),
  );
  return {
    ...counts,
    byEntity: counts.byEntity
      .filter((b) => entities.has(b.key))
      .map((b) => ({ entity: entities.get(b.key)!, count: b.count })),
  };
}

async function neighbourhood(s: ApiServices, principal: Principal, a: Args) {
  const entity = await s.records.entity(principal, dropNulls(a['entity']));
  if (!entity) return null;
  const n = await s.analytics.neighbourhood(principal, entity);
  const statuses = Array.isArray(a['statuses']) ? (a['statuses'] as RecordStatus[]) : undefined;
  return {
    entity: n.entity,
    sameAs: n.sameAs,
    principal,
    asOf: asOfArg(a['asOf']),
    query: {
      namespace: String(a['namespace']),
      aboutEntityIds: [n.entity.id, ...n.sameAs.map((e) => e.id)],
      statuses,
    },
  };
}

function changeQuery(a: Args): ChangeQuery {
  const f = dropNulls(a['filter']) as Args;
  return {
    namespace: String(f['namespace']),
    classes: f['classes'] as ChangeQuery['classes'],
    kinds: f['kinds'] as ChangeQuery['kinds'],
    from: String(a['from']),
    to: String(a['to']),
  };
}

const link = (l: RecordLink) => ({ ...l, from: l.fromId, to: l.toId });

async function changeConnection(
  s: ApiServices,
  principal: Principal,
  q: ChangeQuery,
  first: number,
  after: string | null,
) {
  const page = await s.analytics.changes(principal, q, first, after);
  // The records as the caller may read them now (one scoped read for the page).
  const ids = [...new Set(page.items.map((c) => c.recordId))];
  const records = new Map(
    (await s.analytics.records(principal, ids)).map((r) => [r.id, { ...r, principal }]),
  );
  let counts: Promise<CountBucket[]> | undefined;
  const countsOnce = () => (counts ??= s.analytics.changeCounts(principal, q));
  return {
    nodes: page.items
      .filter((c) => records.has(c.recordId))
      .map((c) => ({
        kind: c.kind,
        at: c.at,
        record: records.get(c.recordId),
        revision: revision(c.revision),
      })),
    pageInfo: { endCursor: page.endCursor, hasNextPage: page.hasNextPage },
    totalCount: async () => (await countsOnce()).reduce((n, b) => n + b.count, 0),
    counts: countsOnce,
  };
}
