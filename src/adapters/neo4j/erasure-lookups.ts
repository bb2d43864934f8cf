import { ERASED_MARK } from '../../domain/sealing.ts';
import type { RecordClass, RecordStatus } from '../../domain/model.ts';
import type {
  ErasureItem,
  ErasureLookups,
  ErasureSelector,
  HoldView,
  RetentionLookups,
} from '../../ports/erasure.ts';
import type { Executor } from './executor.ts';
import { toHold } from './mapping.ts';

/**
 * The graph side of erasure: which records, entities and episodes a request names (tenant-wide, every
 * status), and afterwards which of them still hold personal data (the receipt's graph check).
 */
export class Neo4jErasureLookups implements ErasureLookups, RetentionLookups {
  constructor(private readonly db: Executor) {}

  async plan(tenant: string, sel: ErasureSelector): Promise<ErasureItem[]> {
    const items = await this.named(tenant, sel);
    const have = new Set(items.filter((i) => i.target === 'ENTITY').map((i) => i.id));
    const orphans = await this.orphans(tenant, items);
    return [...items, ...orphans.filter((o) => !have.has(o.id))];
  }

  /**
   * Entities only the erased records are about (an address, an account number the extractor made an
   * entity of): they exist because of the erased data and carry it in their names, so they go too.
   */
  private async orphans(tenant: string, items: readonly ErasureItem[]): Promise<ErasureItem[]> {
    const ids = items.filter((i) => i.target === 'RECORD').map((i) => i.id);
    if (!ids.length) return [];
    const res = await this.db.read(
      'erasure.orphans',
      `MATCH (r:Record {tenant: $tenant})-[:ABOUT]->(e:Entity) WHERE r.id IN $ids
       WITH e, min(r.namespace) AS ns
       WHERE NOT EXISTS { MATCH (e)<-[:ABOUT]-(o:Record) WHERE NOT o.id IN $ids }
       RETURN e.id AS id, ns ORDER BY id`,
      { tenant, ids },
    );
    return res.records.map((r) => ({
      target: 'ENTITY',
      id: String(r.get('id')),
      namespace: String(r.get('ns')),
    }));
  }

  private async named(tenant: string, sel: ErasureSelector): Promise<ErasureItem[]> {
    if (sel.kind === 'RECORD') {
      const res = await this.db.read(
        'erasure.record',
        'MATCH (r:Record {tenant: $tenant, id: $id}) RETURN r.namespace AS ns',
        { tenant, id: sel.recordId },
      );
      const ns = res.records[0]?.get('ns') as string | undefined;
      return ns ? [{ target: 'RECORD', id: sel.recordId, namespace: ns }] : [];
    }
    if (sel.kind === 'NAMESPACE') return this.namespaceItems(tenant, sel.namespace);
    return this.subjectItems(tenant, sel.subject);
  }

  /**
   * An entity (by id, external id, name or alias), the records about it or naming it (as subject, in their
   * text, or in the neighbouring turns they carry as recall context), and their episodes.
   */
  private async subjectItems(tenant: string, s: Extract<ErasureSelector, { kind: 'SUBJECT' }>['subject']) {
    const alias = s.alias?.trim().toLowerCase() ?? null;
    const ents = await this.db.read(
      'erasure.subject',
      `MATCH (e:Entity {tenant: $tenant})
       WHERE ($id IS NOT NULL AND e.id = $id) OR ($ext IS NOT NULL AND $ext IN e.externalIds)
          OR ($alias IS NOT NULL AND (toLower(e.name) = $alias OR $alias IN e.aliases))
       RETURN e.id AS id, [toLower(e.name)] + e.aliases AS names`,
      { tenant, id: s.id ?? null, ext: s.externalId ?? null, alias },
    );
    const entityIds = ents.records.map((r) => String(r.get('id')));
    const names = new Set(
      ents.records.flatMap((r) => (r.get('names') as string[]).map((n) => n.toLowerCase())),
    );
    if (alias) names.add(alias);
    names.delete(ERASED_MARK);
    const recs = await this.db.read(
      'erasure.subject.records',
      `MATCH (r:Record {tenant: $tenant})
       WHERE r.subjectKey IN $names OR EXISTS { MATCH (r)-[:ABOUT]->(e:Entity) WHERE e.id IN $eids }
          OR any(n IN $names WHERE toLower(r.text) CONTAINS n OR toLower(r.object) CONTAINS n
                 OR toLower(coalesce(r.context, '')) CONTAINS n)
       RETURN r.id AS id, r.namespace AS ns, r.episodeId AS ep, r.sourcesJson AS sources ORDER BY r.id`,
      { tenant, names: [...names], eids: entityIds },
    );
    const records = recs.records.map((r) => ({
      target: 'RECORD' as const,
      id: String(r.get('id')),
      namespace: String(r.get('ns')),
    }));
    const episodeIds = new Set<string>();
    for (const r of recs.records) {
      if (r.get('ep')) episodeIds.add(String(r.get('ep')));
      for (const span of JSON.parse(String(r.get('sources') ?? '[]')) as Array<{ episodeId: string }>)
        episodeIds.add(span.episodeId);
    }
    const ns = records[0]?.namespace ?? tenant;
    const entities = entityIds.map((id) => ({ target: 'ENTITY' as const, id, namespace: ns }));
    return [...records, ...entities, ...(await this.episodes(tenant, [...episodeIds], [...names]))];
  }

  private async namespaceItems(tenant: string, namespace: string): Promise<ErasureItem[]> {
    const res = await this.db.read(
      'erasure.namespace',
      `CALL () {
         MATCH (r:Record {tenant: $tenant})
         WHERE r.namespace = $ns OR r.namespace STARTS WITH $prefix
         RETURN 'RECORD' AS target, r.id AS id, r.namespace AS ns
         UNION ALL
         MATCH (ep:Episode {tenant: $tenant})
         WHERE ep.namespace = $ns OR ep.namespace STARTS WITH $prefix
         RETURN 'EPISODE' AS target, ep.id AS id, ep.namespace AS ns
       }
       RETURN target, id, ns ORDER BY target DESC, id`,
      { tenant, ns: namespace, prefix: `${namespace}/` },
    );
    return res.records.map((r) => ({
      target: r.get('target') as ErasureItem['target'],
      id: String(r.get('id')),
      namespace: String(r.get('ns')),
    }));
  }

  /** The episodes the subject's records came from, and every episode that names the subject. */
  private async episodes(tenant: string, ids: string[], names: string[]): Promise<ErasureItem[]> {
    if (!ids.length && !names.length) return [];
    const res = await this.db.read(
      'erasure.episodes',
      `MATCH (ep:Episode {tenant: $tenant})
       WHERE ep.id IN $ids OR any(n IN $names WHERE toLower(ep.text) CONTAINS n)
       RETURN ep.id AS id, ep.namespace AS ns ORDER BY id`,
      { tenant, ids, names },
    );
    return res.records.map((r) => ({
      target: 'EPISODE',
      id: String(r.get('id')),
      namespace: String(r.get('ns')),
    }));
  }

  async remaining(tenant: string, items: readonly ErasureItem[]): Promise<string[]> {
    const ids = (t: ErasureItem['target']) => items.filter((i) => i.target === t).map((i) => i.id);
    const res = await this.db.read(
      'erasure.remaining',
      `CALL () {
         MATCH (r:Record {tenant: $tenant}) WHERE r.id IN $records
           AND (r.status <> 'ERASED' OR r.text <> $mark OR r.subject <> $mark OR r.object <> $mark
                OR r.embedding IS NOT NULL OR r.rationale IS NOT NULL OR r.sourcesJson <> '[]'
                OR r.context IS NOT NULL
                OR EXISTS { MATCH (r)-[:HAS_REVISION]->(v:Revision) WHERE v.text <> $mark OR v.object <> $mark }
                OR EXISTS { MATCH (r)-[x:EXTENDS|CONTRADICTS|SUPERSEDES]->() WHERE x.reason <> '' })
         RETURN r.id AS id
         UNION
         MATCH (e:Entity {tenant: $tenant}) WHERE e.id IN $entities
           AND (e.name <> $mark OR size(e.aliases) > 0 OR size(e.externalIds) > 0 OR e.embedding IS NOT NULL)
         RETURN e.id AS id
         UNION
         MATCH (ep:Episode {tenant: $tenant}) WHERE ep.id IN $episodes
           AND (ep.text <> '' OR EXISTS { MATCH (c:Chunk)-[:PART_OF]->(ep) WHERE c.text <> '' })
         RETURN ep.id AS id
       }
       RETURN id ORDER BY id`,
      {
        tenant,
        mark: ERASED_MARK,
        records: ids('RECORD'),
        entities: ids('ENTITY'),
        episodes: ids('EPISODE'),
      },
    );
    return res.records.map((r) => String(r.get('id')));
  }

  async holds(tenant: string, all: boolean): Promise<HoldView[]> {
    const res = await this.db.read(
      'erasure.holds',
      `MATCH (h:Hold {tenant: $tenant}) WHERE $all OR h.releasedAt IS NULL
       RETURN h ORDER BY h.placedAt DESC, h.id`,
      { tenant, all },
    );
    return res.records.map((r) => {
      const { id, target, namespace, recordId, reason, placedBy, placedAt, releasedAt } = toHold(
        r.get('h').properties as Record<string, unknown>,
      );
      return { id, target, namespace, recordId, reason, placedBy, placedAt, releasedAt };
    });
  }

  async candidates(tenant: string, namespace: string, cutoff: string) {
    const res = await this.db.read(
      'retention.candidates',
      `MATCH (r:Record {tenant: $tenant})
       WHERE (r.namespace = $ns OR r.namespace STARTS WITH $prefix) AND r.createdAt <= $cutoff
       RETURN r.id AS id, r.namespace AS ns, r.class AS class, r.status AS status,
              r.createdAt AS createdAt, r.version AS version
       ORDER BY r.createdAt, r.id`,
      { tenant, ns: namespace, prefix: `${namespace}/`, cutoff },
    );
    return res.records.map((r) => ({
      tenant,
      id: String(r.get('id')),
      namespace: String(r.get('ns')),
      class: r.get('class') as RecordClass,
      status: r.get('status') as RecordStatus,
      createdAt: String(r.get('createdAt')),
      version: Number(r.get('version')),
    }));
  }
}
