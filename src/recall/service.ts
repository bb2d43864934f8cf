import { z } from 'zod';
import { EntityRef, parseCommand } from '../domain/commands.ts';
import { Instant, NamespacePath, RecordClasses } from '../domain/model.ts';
import type { Policy } from '../domain/policy.ts';
import { principalKey, type Principal } from '../domain/principal.ts';
import type { Clock, IdSource } from '../ports/clock.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { ArmQuery, RecallArms, RecordView } from '../ports/graph.ts';
import type { Logger } from '../ports/logger.ts';
import type { Telemetry } from '../ports/telemetry.ts';
import { renderEnvelope } from './envelope.ts';
import { rrf } from './fuse.ts';
import { pack, type Pack } from './pack.ts';
import { getRecipe, type Recipe } from './recipes.ts';
import { lexicalDocuments, phrases, rankLexical } from './lexical.ts';
import {
  blendedItems,
  decidedItems,
  fuseBySpan,
  withTemporalVote,
  type ArmList,
  type Candidate,
} from './rank.ts';

/**
 * Visible fulltext matches ranked per recall over a scope the fulltext index serves (the scan path reads
 * every match); below this many, ranking depends on visible records only. Measured on LoCoMo dev with
 * every namespace on the indexed path (2026-12-04): hybrid recall_any / recall_all / MRR 0.828 / 0.707 /
 * 0.573 at 500, 0.827 / 0.706 / 0.578 at 200, 0.818 / 0.703 / 0.573 at 100; the statement's server time
 * in a 3k-record namespace 12 → 7 ms and its wall time 22 → 10 ms (fewer documents filtered and sent).
 */
const LEXICAL_FETCH = 200;
/** How many of the best found records the graph arm walks structural relations from. */
const RELATED_SEEDS = 8;

export const RecallCommand = z.object({
  query: z.string().min(1).max(4000),
  namespace: NamespacePath,
  purpose: z.string().min(1).max(200),
  anchors: z.array(EntityRef).max(16).default([]),
  classes: z.array(z.enum(RecordClasses)).min(1).optional(),
  asOf: z.object({ validAt: Instant.optional(), knownAt: Instant.optional() }).default({}),
  tokenBudget: z.number().int().min(0).max(100_000).default(1500),
  limit: z.number().int().min(1).max(100).default(10),
  recipe: z.string().min(1).max(100).optional(),
});
export type RecallCommand = z.infer<typeof RecallCommand>;

export interface RecallResult {
  readonly recallId: string;
  readonly recipe: string;
  readonly pack: Pack;
  readonly envelope: string;
  readonly ms: Readonly<Record<string, number>>;
  /** The records behind the items, as read under this recall's scope (purpose included). */
  readonly records: ReadonlyMap<string, RecordView>;
}

export interface RecallDeps {
  readonly store: RecallArms;
  readonly policy: Policy;
  readonly embedder: Embedder;
  readonly clock: Clock;
  readonly ids: IdSource;
  readonly logger: Logger;
  /** Stage latencies per recipe for operators (none when absent). */
  readonly telemetry?: Telemetry;
  /** MAC key of the handles (feedback verifies them with the same key). */
  readonly handleKey: string;
}

type Timed = <T>(name: string, fn: () => Promise<T>) => Promise<T>;

/** Milliseconds since `t0`, to a tenth. */
const since = (t0: number): number => Math.round((performance.now() - t0) * 10) / 10;

/** Runs a named stage and writes its milliseconds into `ms`. */
function timer(ms: Record<string, number>): Timed {
  return async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      ms[name] = since(t0);
    }
  };
}

/** What the arms found before the relation walk: their lists, the graph arm's anchors, the inherited scope. */
interface Found {
  readonly lists: ArmList[];
  /** The graph arm's [recordId, anchorId] pairs. */
  readonly graphIds: Array<[string, string]>;
  readonly scopeIds: string[];
}

/** The arms' lists for fusion: the relation walk's records join the graph arm's, the scope arm comes last. */
function withRelated(found: Found, related: readonly string[], recipe: Recipe): ArmList[] {
  const { lists, scopeIds } = found;
  return [
    ...lists.slice(0, 3),
    { ...lists[3]!, ids: [...new Set([...lists[3]!.ids, ...related])] },
    { arm: 'scope', ids: scopeIds, weight: recipe.armWeights.scope ?? 1 },
  ].filter((l) => l.ids.length > 0);
}

/**
 * Recall: understand → arms in parallel (each filtered by entitlement, status, class and validity inside
 * its own query) → reciprocal-rank fusion → policy blend (recipe) → visibility and precedence → near
 * duplicates → pack to the token budget → the escaped data envelope. Every item says why.
 */
export class RecallService {
  constructor(private readonly d: RecallDeps) {}

  /** One fulltext read feeds both BM25 rankings: the record's own text, and the text with its turn context. */
  private async lexicalArms(
    q: ArmQuery,
    query: string,
    recipe: Recipe,
    timed: Timed,
  ): Promise<[string[], string[]]> {
    const docs = (await timed('lexical', () => this.d.store.lexicalArm(q, query, LEXICAL_FETCH))).map(
      lexicalDocuments,
    );
    return [
      recipe.arms.lexical
        ? rankLexical(
            query,
            docs.map((d) => d.own),
            q.k,
          )
        : [],
      recipe.arms.context
        ? rankLexical(
            query,
            docs.map((d) => d.withContext),
            q.k,
          )
        : [],
    ];
  }

  /**
   * Each arm starts as soon as its own input is ready (fewer sequential round trips): lexical and scope
   * at once, vector after the query's embedding, graph after the anchors are resolved.
   */
  private async arms(
    cmd: RecallCommand,
    recipe: Recipe,
    q: ArmQuery,
    embedding: Promise<Float32Array[]> | null,
    timed: Timed,
  ): Promise<Found> {
    const lexicalArms =
      recipe.arms.lexical || recipe.arms.context ? this.lexicalArms(q, cmd.query, recipe, timed) : [[], []];
    const inherited = recipe.arms.scope ? timed('scope', () => this.d.store.scopeArm(q)) : [];
    const vec = embedding
      ? embedding.then(([v]) =>
          v ? timed('vector', () => this.d.store.vectorArm(q, [...v], this.d.embedder.modelId)) : [],
        )
      : [];
    // Anchors: the entities the caller names, plus those the query mentions by name or alias.
    const graph = recipe.arms.graph
      ? Promise.all([
          Promise.all(cmd.anchors.map((ref) => this.d.store.findEntity(q.scope, ref))),
          timed('anchors', () => this.d.store.entitiesNamed(q.scope, phrases(cmd.query), 8)),
        ]).then(([given, mentioned]) => {
          const ids = [...new Set([...given.flatMap((e) => (e ? [e.id] : [])), ...mentioned])].slice(0, 16);
          return timed('graph', () => this.d.store.graphArm(q, ids));
        })
      : [];
    const [[lexical, context], vectorIds, graphIds, scopeIds] = await Promise.all([
      lexicalArms,
      vec,
      graph,
      inherited,
    ]);
    const lists = [
      { arm: 'lexical', ids: lexical, weight: recipe.armWeights.lexical ?? 1 },
      { arm: 'context', ids: context, weight: recipe.armWeights.context ?? 1 },
      { arm: 'vector', ids: vectorIds, weight: recipe.armWeights.vector ?? 1 },
      { arm: 'graph', ids: graphIds.map(([id]) => id), weight: recipe.armWeights.graph ?? 1 },
    ];
    return { lists, graphIds, scopeIds };
  }

  /**
   * The graph arm's second walk: from the best records the other arms found (the seeds), the records
   * their structural relations reach (relations.ts), behind the anchors' records in the graph arm's list.
   */
  private async related(
    q: ArmQuery,
    found: readonly ArmList[],
    recipe: Recipe,
    timed: Timed,
  ): Promise<string[]> {
    const seeds = rrf(found, recipe.rrfK)
      .slice(0, RELATED_SEEDS)
      .map((f) => f.id);
    if (seeds.length === 0) return [];
    return (await timed('related', () => this.d.store.relatedArm(q, seeds))).map(([id]) => id);
  }

  /**
   * The relation walk from the best found records, and the records of every candidate. The arms' records
   * are read while the walk runs (one round trip off the critical path); only records the walk alone
   * reached are read after it — usually none.
   */
  private async relatedAndRecords(
    q: ArmQuery,
    found: readonly ArmList[],
    scopeIds: readonly string[],
    recipe: Recipe,
    timed: Timed,
  ): Promise<[string[], Map<string, Candidate>]> {
    const armIds = new Set([...found.flatMap((l) => l.ids), ...scopeIds]);
    const read = (ids: readonly string[]) =>
      ids.length === 0 ? Promise.resolve([]) : this.d.store.recordsByIds(q.scope, ids, q.knownAt);
    const [related, armRecords] = await Promise.all([
      recipe.arms.graph ? this.related(q, found, recipe, timed) : [],
      timed('records', () => read([...armIds])),
    ]);
    const more = await read([...new Set(related)].filter((id) => !armIds.has(id)));
    return [related, new Map([...armRecords, ...more].map((r) => [r.id, r]))];
  }

  async recall(principal: Principal, input: unknown): Promise<RecallResult> {
    const cmd = parseCommand(RecallCommand, input);
    const recipe = getRecipe(cmd.recipe);
    const ms: Record<string, number> = {};
    const timed = timer(ms);
    // The query's embedding needs no scope, so it runs while the caller's grants are read (the vector arm
    // waits for one round trip less). A caller then refused only wastes the model's few milliseconds.
    const embedding = recipe.arms.vector ? timed('embed', () => this.d.embedder.embed([cmd.query])) : null;
    embedding?.catch(() => undefined); // awaited below; not an unhandled rejection if the grants refuse first
    const scope = await this.d.policy.readScope(principal, cmd.purpose);
    const now = this.d.clock.now().toISOString();
    const validAt = cmd.asOf.validAt ?? now;
    const recallId = this.d.ids.uuid();
    const q: ArmQuery = {
      scope,
      namespace: cmd.namespace,
      classes: cmd.classes ?? null,
      validAt,
      knownAt: cmd.asOf.knownAt ?? null,
      // Each arm looks at least as deep as the caller asked: a recall for 50 can return 50 visible matches.
      k: Math.max(recipe.perArmK, cmd.limit),
    };

    const found = await this.arms(cmd, recipe, q, embedding, timed);
    const [related, records] = await this.relatedAndRecords(q, found.lists, found.scopeIds, recipe, timed);
    const armLists = withRelated(found, related, recipe);
    const t0 = performance.now();
    const lists = recipe.arms.temporal
      ? withTemporalVote(armLists, cmd.query, records, recipe, q.k)
      : armLists;
    const fused = fuseBySpan(lists, records, recipe.rrfK);
    const request = { query: cmd.query, namespace: cmd.namespace, now, recipe };
    const distinct = decidedItems(blendedItems(fused, records, found.graphIds, request), validAt, recipe);
    ms['fuse'] = since(t0);

    const t1 = performance.now();
    const packed = pack(distinct.slice(0, cmd.limit), cmd.tokenBudget, {
      recallId,
      handleKey: this.d.handleKey,
      caller: principalKey(principal),
    });
    const envelope = renderEnvelope(packed.items, { recallId });
    ms['pack'] = since(t1);
    this.d.logger.info(
      {
        op: 'recall',
        tenant: principal.tenant,
        recipe: recipe.name,
        recallId,
        candidates: fused.length,
        items: packed.items.length,
        tokens: packed.tokens,
        ms,
      },
      'recall',
    );
    this.d.telemetry?.recall(recipe.name, ms);
    return { recallId, recipe: recipe.name, pack: packed, envelope, ms, records };
  }
}
