import type { Record as Neo4jRecord } from 'neo4j-driver';
import type { ReadScope } from '../../domain/policy.ts';
import type { EntityFacts, EntityProbe } from '../../ports/ingest-lookups.ts';
import type { EntityIndex, HeldEntities } from './entity-held.ts';
import type { Executor } from './executor.ts';
import { toEntity } from './mapping.ts';
import { entityVisible, scopeParams } from './scope.ts';
import { windows } from './vector-shards.ts';

/** The first window of a probe's nearest ranking that Neo4j checks; most nearest entities are visible. */
const FIRST_WINDOW = 16;

/**
 * A probe's exact match: among its candidates (entity-held.ts), the first by id that is the probe's id,
 * has its external id, or has its alias as lower-cased name or alias with a compatible type ("Mercury" the
 * planet is not "Mercury" the project), and is visible.
 */
const EXACT = `COLLECT {
         UNWIND p.exact AS cid
         MATCH (e:Entity {tenant: $tenant, id: cid}) USING INDEX SEEK e:Entity(tenant, id)
         WHERE ((p.id IS NOT NULL AND e.id = p.id)
            OR (p.ext IS NOT NULL AND p.ext IN e.externalIds)
            OR (p.alias IS NOT NULL AND (toLower(e.name) = p.alias OR p.alias IN e.aliases)
                AND (p.type IS NULL OR e.type IS NULL OR e.type = p.type)))
           AND ${entityVisible('e')}
         RETURN e ORDER BY e.id LIMIT 1
       }`;

/**
 * The first visible entity of a window of the probe's ranking (`p.near`, best first), with its place in the
 * window. A model is set and cleared with its embedding (projection-store.ts), so `embeddingModel =
 * p.modelId` also says it still has one.
 */
const NEAREST = `COLLECT {
         UNWIND range(0, size(p.near) - 1) AS j
         MATCH (e:Entity {tenant: $tenant, id: p.near[j]}) USING INDEX SEEK e:Entity(tenant, id)
         WHERE e.embeddingModel = p.modelId AND ${entityVisible('e')}
         RETURN {e: e, j: j} ORDER BY j LIMIT 1
       }`;

/** Each probe's facts: exact match, nearest in the first window, whether its default id is taken and visible. */
export const ENTITY_FACTS = `UNWIND $ps AS p
     RETURN p.i AS i, ${EXACT} AS exact, ${NEAREST} AS nearest,
       EXISTS { MATCH (d:Entity {tenant: $tenant, id: p.defaultId}) } AS taken,
       EXISTS { MATCH (d:Entity {tenant: $tenant, id: p.defaultId}) WHERE ${entityVisible('d')} } AS visible`;

/** The nearest visible entity in a later window of each probe still without one. */
export const ENTITY_NEAREST = `UNWIND $ps AS p
     RETURN p.i AS i, ${NEAREST} AS nearest`;

/**
 * Entity resolution's facts for every probe: the exact match, the nearest visible neighbour (by exact
 * cosine within the tenant and the probe's model: other tenants' entities never crowd it out), and whether
 * the probe's default id is taken and by a visible entity. The candidates and the ranking come from the
 * tenant's index held in process; Neo4j reads only them, by id, under the read path's one entity predicate
 * (entity-held.ts says why). The nearest is found a window of the ranking at a time, as relate's are.
 */
export async function entityFacts(
  db: Executor,
  held: HeldEntities,
  scope: ReadScope,
  probes: readonly EntityProbe[],
): Promise<EntityFacts[]> {
  if (probes.length === 0) return [];
  const index = await held.of(scope.tenant);
  const rankings = probes.map((p) => (p.vector ? index.ranking(p.modelId, p.vector) : null));
  const out: EntityFacts[] = probes.map(() => ({
    exact: null,
    nearest: null,
    defaultIdTaken: false,
    defaultIdVisible: false,
  }));
  let first = true;
  for (const w of windows(FIRST_WINDOW)) {
    const asked = probes.flatMap((p, i) => {
      const ranking = rankings[i] ?? null;
      const more = ranking !== null && ranking.size > w.from && out[i]!.nearest === null;
      if (!first && !more) return [];
      return [{ i, p, near: more ? ranking.topScored(w.to).slice(w.from) : [] }];
    });
    if (asked.length === 0) break;
    const res = await db.read(
      first ? 'entity.factsMany' : 'entity.nearestWindow',
      first ? ENTITY_FACTS : ENTITY_NEAREST,
      { ...scopeParams(scope), ps: asked.map((a) => probeRow(a, first ? index : null)) },
    );
    const nearOf = new Map(asked.map((a) => [a.i, a.near]));
    for (const r of res.records) {
      const i = Number(r.get('i'));
      const facts = toEntityFacts(r, first, nearOf.get(i)!);
      out[i] = first ? facts : { ...out[i]!, nearest: facts.nearest };
    }
    first = false;
  }
  return out;
}

type Scored = { readonly id: string; readonly cosine: number };

/** A probe as the statement reads it: its keys, its exact candidates (first window only), its window's ids. */
function probeRow(a: { i: number; p: EntityProbe; near: readonly Scored[] }, index: EntityIndex | null) {
  const { i, p } = a;
  const alias = p.alias?.toLowerCase() ?? null;
  return {
    i,
    ...{ id: p.id ?? null, ext: p.externalId ?? null, alias, type: p.type ?? null },
    ...{ modelId: p.modelId, defaultId: p.defaultId },
    exact: index ? index.candidates({ id: p.id, ext: p.externalId, alias }) : [],
    near: a.near.map((x) => x.id),
  };
}

/** One probe's row: the nearest's cosine is the one its ranking computed (32-bit, within ~1e-6 of Neo4j's). */
function toEntityFacts(r: Neo4jRecord, first: boolean, near: readonly Scored[]): EntityFacts {
  const [nearest] = r.get('nearest') as Array<{ e: { properties: Record<string, unknown> }; j: unknown }>;
  const [exact] = first ? (r.get('exact') as Array<{ properties: Record<string, unknown> }>) : [];
  return {
    exact: exact ? toEntity(exact.properties) : null,
    nearest: nearest ? { ...toEntity(nearest.e.properties), cosine: near[Number(nearest.j)]!.cosine } : null,
    defaultIdTaken: first && r.get('taken') === true,
    defaultIdVisible: first && r.get('visible') === true,
  };
}
