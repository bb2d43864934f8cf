import type { IResolvers } from '@graphql-tools/utils';
import type { Principal, Reader } from '../domain/principal.ts';
import type { RecordView } from '../ports/graph.ts';
import { headlineOf } from '../recall/pack.ts';
import { badInput } from '../domain/errors.ts';
import { recordNamedByHandle } from '../domain/handles.ts';
import type { ApiContext } from './context.ts';
import { asOfArg, dropNulls, pageSize, readerOf, recordQuery, revision, type Args } from './resolver-args.ts';
import type { ApiServices } from './services.ts';

export interface RecordParent extends RecordView {
  /** Who reads, with the purpose the top-level field stated: nested fields read under the same. */
  readonly principal: Reader;
}

const withPrincipal = (p: Reader) => (r: RecordView | undefined) => (r ? { ...r, principal: p } : null);

/** One record as this reader may see it (at `asOf` when given), with the reader kept for its nested fields. */
async function readOne(s: ApiServices, reader: Reader, id: string, a: Args) {
  return withPrincipal(reader)(await s.records.record(reader, id, asOfArg(a['asOf'])));
}

/** Reading records: recall, single records and pages of them, and the fields nested under a Record. */
export function buildRecordResolvers(s: ApiServices): IResolvers<unknown, ApiContext> {
  return {
    Query: {
      recall: (_: unknown, a: Args, ctx: ApiContext) => recall(s, ctx.principal, a),
      record: (_: unknown, a: Args, ctx: ApiContext) =>
        readOne(s, readerOf(ctx.principal, a), String(a['id']), a),
      records: (_: unknown, a: Args, ctx: ApiContext) => recordsPage(s, ctx.principal, a),
      expand: async (_: unknown, a: Args, ctx: ApiContext) => {
        const id = recordNamedByHandle(String(a['handle']));
        if (!id) throw badInput('not a recall handle (h:<recordId>.<mac>)');
        return readOne(s, readerOf(ctx.principal, a), id, a);
      },
      history: async (_: unknown, a: Args, ctx: ApiContext) =>
        (await s.records.history(readerOf(ctx.principal, a), String(a['id']))).map(revision),
      entity: async (_: unknown, a: Args, ctx: ApiContext) =>
        (await s.records.entity(readerOf(ctx.principal, a), dropNulls(a['ref']))) ?? null,
      grants: (_: unknown, _a: Args, ctx: ApiContext) => s.records.grants(ctx.principal),
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
      relations: (r: RecordParent, a: Args) => relationsOf(s, r, a),
    },
  };
}

async function recall(s: ApiServices, principal: Principal, a: Args) {
  const r = await s.recall.recall(principal, dropNulls(a['input']));
  // Nested reads of the items (history, about, relations) run under the recall's purpose.
  const reader: Reader = { ...principal, purpose: (a['input'] as { purpose: string }).purpose };
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
}

async function recordsPage(s: ApiServices, principal: Principal, a: Args) {
  const first = pageSize(a['first']);
  const reader = readerOf(principal, a);
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
}

async function relationsOf(s: ApiServices, r: RecordParent, a: Args) {
  const types = Array.isArray(a['types']) ? (a['types'] as string[]) : null;
  const rels = (await s.records.relations(r.principal, r.id)).filter((x) => !types || types.includes(x.type));
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
}
