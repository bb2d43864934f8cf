import type { IResolvers } from '@graphql-tools/utils';
import { z } from 'zod';
import { parseCommand, Purpose } from '../domain/commands.ts';
import type { Principal, Reader } from '../domain/principal.ts';
import type { AsOf, RecordQuery, RecordView, RevisionView } from '../ports/graph.ts';
import type { RecordsService } from '../records/service.ts';
import type { AnalyticsService } from '../records/analytics.ts';
import type { StewardshipService } from '../records/stewardship.ts';
import type { WriteReceipt, WriteService } from '../ingest/write-service.ts';
import type { RecallService } from '../recall/service.ts';
import type { ErasureService } from '../lifecycle/erasure.ts';
import type { HoldService } from '../lifecycle/holds.ts';
import { headlineOf } from '../recall/pack.ts';
import type { Proposal } from '../ports/graph.ts';
import { projectionViewFor, type ProjectionStatus } from '../records/projection-status.ts';
import { badInput, forbidden } from '../domain/errors.ts';
import { hasScope } from '../domain/principal.ts';
import { recordNamedByHandle } from '../domain/handles.ts';
import type { ApiContext } from './context.ts';
import { DateTime, JSONScalar } from './scalars.ts';

/** What the resolvers need; wired by main.ts. The API never sees an adapter. */
export interface ApiServices {
  readonly records: RecordsService;
  readonly writes: WriteService;
  readonly recall: RecallService;
  /** Crypto-shredding (admin only); absent where a process serves no erasure. */
  readonly erasure?: ErasureService;
  readonly holds?: HoldService;
  readonly projection: () => Promise<ProjectionStatus>;
  readonly analytics: AnalyticsService;
  /** Scorecard, findings, owners and stewards; absent where a process serves none. */
  readonly stewardship?: StewardshipService;
}

type Args = Record<string, unknown>;
const obj = (v: unknown): Args => (v && typeof v === 'object' ? (v as Args) : {});

export function asOfArg(v: unknown): AsOf {
  const a = obj(v);
  return {
    validAt: (a['validAt'] as string | undefined) ?? undefined,
    knownAt: (a['knownAt'] as string | undefined) ?? undefined,
  };
}

/** GraphQL input → command input: drop transport options and nulls (GraphQL null = "not given"). */
function commandInput(v: unknown): { input: Args; wait: boolean } {
  const { await: w, ...rest } = obj(v);
  return { input: dropNulls(rest) as Args, wait: w !== false };
}
/** GraphQL passes omitted optional arguments as null; the services' schemas expect them absent. */
export function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== null && x !== undefined)
        .map(([k, x]) => [k, dropNulls(x)]),
    );
  }
  return v;
}

/** A RecordFilter argument → the store's RecordQuery (entity refs resolved as the caller sees them). */
export async function recordQuery(
  s: ApiServices,
  principal: Principal,
  filter: unknown,
): Promise<RecordQuery> {
  const f = dropNulls(obj(filter)) as Args;
  let aboutEntityIds: string[] | undefined;
  if (Array.isArray(f['about'])) {
    const found = await Promise.all(f['about'].map((ref) => s.records.entity(principal, ref)));
    aboutEntityIds = found.filter((e) => e !== undefined).map((e) => e.id);
  }
  return {
    namespace: String(f['namespace']),
    classes: f['classes'] as never,
    statuses: f['statuses'] as never,
    aboutEntityIds,
    predicate: f['predicate'] as string | undefined,
    textContains: f['textContains'] as string | undefined,
    changesetId: f['changesetId'] as string | undefined,
  };
}

interface RecordParent extends RecordView {
  /** Who reads, with the purpose the top-level field stated: nested fields read under the same. */
  readonly principal: Reader;
}

/** The caller with the purpose the field states (`purpose` argument), checked like a command's. */
function readerOf(principal: Principal, a: Args): Reader {
  const purpose = a['purpose'];
  if (purpose === undefined || purpose === null) return principal;
  return { ...principal, purpose: parseCommand(z.object({ purpose: Purpose }), { purpose }).purpose };
}

export const revision = (v: RevisionView) => ({
  ...v,
  statement: { subject: v.subject, predicate: v.predicate, object: v.object, text: v.text },
});

/** projectionLag ticks no faster than this, whatever `intervalMs` asks for. */
export const MIN_LAG_INTERVAL_MS = 1000;

export function buildResolvers(s: ApiServices): IResolvers<unknown, ApiContext> {
  // Every projectionLag subscriber of this process shares one status read per interval: Kafka and Neo4j
  // see at most one poll a second however many sockets subscribe.
  const lagStatus = shared(s.projection, MIN_LAG_INTERVAL_MS);
  const withPrincipal = (p: Reader) => (r: RecordView | undefined) => (r ? { ...r, principal: p } : null);
  return {
    DateTime,
    JSON: JSONScalar,
    Query: {
      recall: async (_: unknown, a: Args, ctx: ApiContext) => {
        const r = await s.recall.recall(ctx.principal, dropNulls(a['input']));
        // Nested reads of the items (history, about, relations) run under the recall's purpose.
        const reader: Reader = { ...ctx.principal, purpose: (a['input'] as { purpose: string }).purpose };
        // The records as the recall read them: under its purpose's scope, in the same snapshot.
        const records = r.records;
        return {
          recallId: r.recallId,
          recipe: r.recipe,
          tokens: r.pack.tokens,
          budget: r.pack.budget,
          envelope: r.envelope,
          omitted: r.pack.omitted.length,
          items: r.pack.items
            .filter((i) => records.has(i.id))
            .map((i) => {
              const rec = records.get(i.id)!;
              return {
                handle: i.handle,
                record: { ...rec, principal: reader },
                score: i.score,
                level: i.level,
                headline: headlineOf(rec),
                body: i.body,
                contested: i.contested,
                why: {
                  arms: i.why.arms,
                  score: i.why.score,
                  signals: i.why.signals,
                  anchor: i.why.anchor,
                  proposedBy: i.why.provenance.proposedBy,
                  changesetId: i.why.provenance.changesetId,
                  episodes: i.why.provenance.episodes,
                  confidence: i.why.confidence,
                  overrode: i.why.overrode,
                  contestedWith: i.why.contestedWith,
                  taint: rec.taint ?? null,
                },
              };
            }),
        };
      },
      record: async (_: unknown, a: Args, ctx: ApiContext) =>
        withPrincipal(readerOf(ctx.principal, a))(
          await s.records.record(readerOf(ctx.principal, a), String(a['id']), asOfArg(a['asOf'])),
        ),
      records: async (_: unknown, a: Args, ctx: ApiContext) => {
        const first = Number(a['first'] ?? 50);
        if (!Number.isInteger(first) || first < 1 || first > 500)
          throw badInput('first must be between 1 and 500');
        const reader = readerOf(ctx.principal, a);
        const query = await recordQuery(s, reader, a['filter']);
        const page = await s.records.records(
          reader,
          query,
          asOfArg(a['asOf']),
          first,
          (a['after'] as string | null | undefined) ?? null,
        );
        return {
          nodes: page.items.map((r) => ({ ...r, principal: reader })),
          pageInfo: { endCursor: page.endCursor, hasNextPage: page.hasNextPage },
          // Resolved only when asked for; the same scope and filter as the page.
          totalCount: () => s.records.recordCount(reader, query, asOfArg(a['asOf'])),
        };
      },
      expand: async (_: unknown, a: Args, ctx: ApiContext) => {
        const id = recordNamedByHandle(String(a['handle']));
        if (!id) throw badInput('not a recall handle (h:<recordId>.<mac>)');
        const reader = readerOf(ctx.principal, a);
        return withPrincipal(reader)(await s.records.record(reader, id, asOfArg(a['asOf'])));
      },
      history: async (_: unknown, a: Args, ctx: ApiContext) =>
        (await s.records.history(readerOf(ctx.principal, a), String(a['id']))).map(revision),
      entity: async (_: unknown, a: Args, ctx: ApiContext) =>
        (await s.records.entity(readerOf(ctx.principal, a), dropNulls(a['ref']))) ?? null,
      reviewQueue: async (_: unknown, a: Args, ctx: ApiContext) => {
        const first = pageSize(a['first']);
        const page = await s.records.reviewQueue(
          ctx.principal,
          String(a['namespace']),
          first,
          (a['after'] as string | null | undefined) ?? null,
        );
        return {
          nodes: page.items.map((p) => proposal(p, ctx.principal)),
          pageInfo: { endCursor: page.endCursor, hasNextPage: page.hasNextPage },
        };
      },
      projection: async (_: unknown, _a: Args, ctx: ApiContext) => {
        requireRead(ctx.principal);
        return projectionViewFor(await s.projection(), hasScope(ctx.principal, 'admin'));
      },
      grants: (_: unknown, _a: Args, ctx: ApiContext) => s.records.grants(ctx.principal),
      holds: (_: unknown, _a: Args, ctx: ApiContext) => {
        if (!s.holds) throw forbidden('legal holds are not served here');
        return s.holds.list(ctx.principal);
      },
    },
    Mutation: {
      propose: (_: unknown, a: Args, ctx: ApiContext) => {
        const { input, wait } = commandInput(a['input']);
        return s.writes.propose(ctx.principal, input, wait);
      },
      revise: (_: unknown, a: Args, ctx: ApiContext) => {
        const { input, wait } = commandInput(a['input']);
        return s.writes.revise(ctx.principal, input, wait);
      },
      relate: (_: unknown, a: Args, ctx: ApiContext) => {
        const { input, wait } = commandInput(a['input']);
        return s.writes.relate(ctx.principal, input, wait);
      },
      ingestEpisode: (_: unknown, a: Args, ctx: ApiContext) => {
        const { input, wait } = commandInput(a['input']);
        return s.writes.ingestEpisode(ctx.principal, input, wait);
      },
      approve: (_: unknown, a: Args, ctx: ApiContext) => {
        const { input, wait } = commandInput(a['input']);
        return s.writes.approve(ctx.principal, input, wait);
      },
      reject: (_: unknown, a: Args, ctx: ApiContext) => {
        const { input, wait } = commandInput(a['input']);
        return s.writes.reject(ctx.principal, input, wait);
      },
      retract: (_: unknown, a: Args, ctx: ApiContext) => {
        const { input, wait } = commandInput(a['input']);
        return s.writes.retract(ctx.principal, input, wait);
      },
      feedback: (_: unknown, a: Args, ctx: ApiContext) => {
        const { input, wait } = commandInput(a['input']);
        return s.writes.feedback(ctx.principal, input, wait);
      },
      grantAccess: async (_: unknown, a: Args, ctx: ApiContext) => {
        const { input, wait } = commandInput(a['input']);
        return grantReceipt(await s.writes.grantAccess(ctx.principal, input, wait));
      },
      revokeAccess: async (_: unknown, a: Args, ctx: ApiContext) => {
        const { input, wait } = commandInput(a['input']);
        return grantReceipt(await s.writes.revokeAccess(ctx.principal, input, wait));
      },
      erase: (_: unknown, a: Args, ctx: ApiContext) => {
        if (!s.erasure) throw forbidden('erasure is not served here');
        return s.erasure.erase(ctx.principal, dropNulls(a['input']));
      },
      placeHold: (_: unknown, a: Args, ctx: ApiContext) => {
        if (!s.holds) throw forbidden('legal holds are not served here');
        return s.holds.place(ctx.principal, dropNulls(a['input']));
      },
      dismissFinding: (_: unknown, a: Args, ctx: ApiContext) => {
        const { input, wait } = commandInput(a['input']);
        return s.writes.dismissFinding(ctx.principal, input, wait);
      },
      rollback: (_: unknown, a: Args, ctx: ApiContext) => {
        const { input, wait } = commandInput(a['input']);
        return s.writes.rollback(ctx.principal, input, wait);
      },
      releaseHold: (_: unknown, a: Args, ctx: ApiContext) => {
        if (!s.holds) throw forbidden('legal holds are not served here');
        return s.holds.release(ctx.principal, dropNulls(a['input']));
      },
    },
    Subscription: {
      reviewQueue: {
        subscribe: (_: unknown, a: Args, ctx: ApiContext) =>
          reviewFeed(s, ctx.principal, String(a['namespace'])),
      },
      projectionLag: {
        subscribe: (_: unknown, a: Args, ctx: ApiContext) => {
          requireRead(ctx.principal);
          const interval = Math.max(MIN_LAG_INTERVAL_MS, Number(a['intervalMs'] ?? 1000) || 0);
          const admin = hasScope(ctx.principal, 'admin');
          return ticker(interval, async () => ({
            projectionLag: projectionViewFor(await lagStatus(), admin),
          }));
        },
      },
    },
    Record: {
      statement: (r: RecordParent) => ({
        subject: r.subject,
        predicate: r.predicate,
        object: r.object,
        text: r.text,
      }),
      sources: (r: RecordParent) => JSON.parse(r.sourcesJson) as unknown,
      ext: (r: RecordParent) => JSON.parse(r.extJson) as unknown,
      about: (r: RecordParent) => s.records.entitiesByIds(r.principal, r.about),
      history: async (r: RecordParent) => (await s.records.history(r.principal, r.id)).map(revision),
      relations: async (r: RecordParent, a: Args) => {
        const types = Array.isArray(a['types']) ? (a['types'] as string[]) : null;
        const rels = (await s.records.relations(r.principal, r.id)).filter(
          (x) => !types || types.includes(x.type),
        );
        // The other end goes through the same entitlement check as any read: invisible → null.
        return Promise.all(
          rels.map(async (x) => ({
            ...x,
            targetId: x.otherId,
            target:
              x.targetKind === 'RECORD'
                ? withPrincipal(r.principal)(await s.records.record(r.principal, x.otherId, {}))
                : null,
            targetEntity:
              x.targetKind === 'ENTITY'
                ? ((await s.records.entitiesByIds(r.principal, [x.otherId]))[0] ?? null)
                : null,
          })),
        );
      },
    },
    Proposal: {
      record: (p: ProposalParent) => p.record,
    },
  };
}

interface ProposalParent {
  readonly id: string;
  readonly record: RecordParent;
}

function proposal(p: Proposal, principal: Principal) {
  return {
    id: p.record.id,
    record: { ...p.record, principal },
    version: p.record.version,
    reasons: p.reviewReasons,
    flags: p.flags,
    proposedBy: p.record.proposedBy,
    createdAt: p.record.createdAt,
  };
}

export function pageSize(v: unknown): number {
  const first = Number(v ?? 50);
  if (!Number.isInteger(first) || first < 1 || first > 500) throw badInput('first must be between 1 and 500');
  return first;
}

/** Polls the queue (works whether the projector runs here or elsewhere); emits each proposal version once. */
function reviewFeed(
  s: ApiServices,
  principal: Principal,
  namespace: string,
): AsyncIterableIterator<{ reviewQueue: ReturnType<typeof proposal> }> {
  const seen = new Set<string>();
  const buffer: Array<ReturnType<typeof proposal>> = [];
  let done = false;
  let timer: NodeJS.Timeout | undefined;
  const fill = async () => {
    let after: string | null = null;
    for (;;) {
      const page = await s.records.reviewQueue(principal, namespace, 200, after);
      for (const p of page.items) {
        const key = `${p.record.id}@${p.record.version}`;
        if (!seen.has(key)) {
          seen.add(key);
          buffer.push(proposal(p, principal));
        }
      }
      if (!page.hasNextPage) return;
      after = page.endCursor;
    }
  };
  const it: AsyncIterableIterator<{ reviewQueue: ReturnType<typeof proposal> }> = {
    [Symbol.asyncIterator]: () => it,
    next: async () => {
      while (!done && buffer.length === 0) {
        await fill();
        if (buffer.length === 0) await new Promise<void>((r) => (timer = setTimeout(r, 500)));
      }
      if (done) return { done: true, value: undefined };
      return { done: false, value: { reviewQueue: buffer.shift()! } };
    },
    return: async () => {
      done = true;
      if (timer) clearTimeout(timer);
      return { done: true, value: undefined };
    },
  };
  return it;
}

function requireRead(p: Principal): void {
  if (!hasScope(p, 'read')) throw forbidden('the read scope is required');
}

/** An async iterator that yields `next()` every `ms` until the subscriber leaves. */
function ticker<T>(ms: number, next: () => Promise<T>): AsyncIterableIterator<T> {
  let done = false;
  let timer: NodeJS.Timeout | undefined;
  const it: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]: () => it,
    next: async () => {
      if (done) return { done: true, value: undefined };
      const first = timer === undefined;
      if (!first) await new Promise<void>((r) => (timer = setTimeout(r, ms)));
      timer = timer ?? setTimeout(() => undefined, 0);
      if (done) return { done: true, value: undefined };
      return { done: false, value: await next() };
    },
    return: async () => {
      done = true;
      if (timer) clearTimeout(timer);
      return { done: true, value: undefined };
    },
  };
  return it;
}

/** `read` coalesced: callers within `maxAgeMs` of the last read (or during one) share its result. */
function shared<T>(read: () => Promise<T>, maxAgeMs: number): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    if (last && Date.now() - last.at < maxAgeMs) return last.value;
    const value = read();
    last = { at: Date.now(), value };
    // A failed read is not shared beyond the callers already waiting on it.
    value.catch(() => {
      if (last?.value === value) last = undefined;
    });
    return value;
  };
}

/** A grant's receipt names the grant where a record receipt names the record. */
const grantReceipt = ({ recordId, version: _v, ...r }: WriteReceipt) => ({ ...r, grantId: recordId });
