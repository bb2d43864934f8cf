import type { RollbackTarget } from '../../domain/events.ts';
import type { RecordState } from '../../domain/fold.ts';
import { EPISODE_NODE, type DerivationEdge } from '../../domain/rollback-plan.ts';
import type { RollbackLookups } from '../../ports/ingest-lookups.ts';
import type { Executor } from './executor.ts';
import { toRecordState } from './mapping.ts';
import { LOAD_RECORDS } from './projection-store.ts';

/**
 * The reads a rollback plans from (ingest/commands/rollback.ts), tenant-wide: which events a target
 * names and which records they changed, then the derivation edges around what it compensates.
 */
export class Neo4jRollbackLookups implements RollbackLookups {
  constructor(private readonly db: Executor) {}

  async rollbackScope(
    tenant: string,
    target: RollbackTarget,
  ): Promise<{ records: RecordState[]; eventIds: string[] }> {
    const hit = await this.touched(tenant, target);
    if (hit.recordIds.length === 0) return { records: [], eventIds: [] };
    const res = await this.db.read('rollback.records', LOAD_RECORDS, {
      keys: hit.recordIds.map((id) => ({ tenant, id })),
    });
    const records = res.records.map(toRecordState);
    if (target.kind !== 'NAMESPACE') return { records, eventIds: hit.eventIds };
    // To a time: every change after it, partial approvals (no revision of their own) included.
    const after = records.flatMap((r) => [
      ...r.revisions.filter((v) => v.recordedAt > target.to).map((v) => v.eventId),
      ...r.approvals.filter((a) => a.at > target.to).map((a) => a.eventId),
    ]);
    return { records, eventIds: [...new Set(after)].sort() };
  }

  /** The ids of the records the target touched (and, for an event or changeset, the events). */
  private async touched(
    tenant: string,
    target: RollbackTarget,
  ): Promise<{ recordIds: string[]; eventIds: string[] }> {
    if (target.kind === 'NAMESPACE') {
      const res = await this.db.read(
        'rollback.namespace',
        // In the namespace now, or moved out of it after T (a revision there was still current after T).
        `CALL {
           MATCH (n:Record {tenant: $tenant})
           WHERE (n.namespace = $ns OR n.namespace STARTS WITH $ns + '/')
             AND (EXISTS { MATCH (n)-[:HAS_REVISION]->(v:Revision) WHERE v.recordedAt > $to }
                  OR coalesce(n.approvalsJson, '[]') <> '[]')
           RETURN n.id AS id
           UNION
           MATCH (n:Record {tenant: $tenant})-[:HAS_REVISION]->(w:Revision)
           WHERE (w.namespace = $ns OR w.namespace STARTS WITH $ns + '/') AND w.retiredAt > $to
           RETURN n.id AS id
         }
         RETURN collect(DISTINCT id) AS ids`,
        { tenant, ns: target.namespace, to: target.to },
      );
      return { recordIds: (res.records[0]?.get('ids') as string[]) ?? [], eventIds: [] };
    }
    const res = await this.db.read(
      'rollback.events',
      `CALL {
         MATCH (v:Revision {tenant: $tenant})
         WHERE ($eventId IS NOT NULL AND v.eventId = $eventId) OR ($cs IS NOT NULL AND v.changesetId = $cs)
         RETURN v.recordId AS id, v.eventId AS e
         UNION
         MATCH (n:Record {tenant: $tenant}) WHERE $eventId IS NOT NULL AND n.approvalsJson CONTAINS $eventId
         RETURN n.id AS id, $eventId AS e
       }
       RETURN collect(DISTINCT id) AS ids, collect(DISTINCT e) AS events`,
      {
        tenant,
        eventId: target.kind === 'EVENT' ? target.eventId : null,
        cs: target.kind === 'CHANGESET' ? target.changesetId : null,
      },
    );
    const row = res.records[0];
    return {
      recordIds: ((row?.get('ids') as string[]) ?? []).sort(),
      eventIds: ((row?.get('events') as string[]) ?? []).sort(),
    };
  }

  async derivations(tenant: string, seeds: readonly string[], maxDepth: number): Promise<DerivationEdge[]> {
    const edges: DerivationEdge[] = [];
    const seen = new Set(seeds);
    const episodes = seeds.filter((s) => s.startsWith(EPISODE_NODE)).map((s) => s.slice(EPISODE_NODE.length));
    let frontier = seeds.filter((s) => !s.startsWith(EPISODE_NODE));
    if (episodes.length) {
      // Reinforcement provenance: a record citing the episode in its sources (a repeat adds its spans).
      const res = await this.db.read(
        'rollback.provenance',
        `MATCH (x:Record {tenant: $tenant}) WHERE any(e IN $eps WHERE x.sourcesJson CONTAINS e)
         RETURN x.id AS id, x.sourcesJson AS sources`,
        { tenant, eps: episodes },
      );
      for (const r of res.records) {
        const cited = new Set(
          (JSON.parse(String(r.get('sources'))) as Array<{ episodeId?: string }>).map((x) => x.episodeId),
        );
        for (const ep of episodes.filter((e) => cited.has(e))) {
          edges.push({ from: String(r.get('id')), to: `${EPISODE_NODE}${ep}` });
          if (!seen.has(String(r.get('id')))) frontier.push(String(r.get('id')));
          seen.add(String(r.get('id')));
        }
      }
    }
    for (let depth = 0; depth < maxDepth && frontier.length > 0; depth++) {
      const res = await this.db.read(
        'rollback.derivations',
        `MATCH (x:Record {tenant: $tenant})-[:DERIVED_FROM|SUPERSEDES]->(s:Record {tenant: $tenant})
         WHERE s.id IN $frontier RETURN x.id AS from, s.id AS to`,
        { tenant, frontier },
      );
      const next: string[] = [];
      for (const r of res.records) {
        const e = { from: String(r.get('from')), to: String(r.get('to')) };
        edges.push(e);
        if (!seen.has(e.from)) next.push(e.from);
        seen.add(e.from);
      }
      frontier = next;
    }
    return edges;
  }
}
