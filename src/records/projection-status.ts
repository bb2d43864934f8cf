import type { Checkpoints } from '../ports/graph.ts';
import type { Ledger } from '../ports/ledger.ts';
import type { ProjectionHealth, ProjectionStall } from '../ports/projection-health.ts';

export interface PartitionLag {
  readonly partition: number;
  readonly checkpoint: string;
  readonly highWatermark: string;
  readonly lag: number;
}
export interface ProjectionStatus {
  readonly healthy: boolean;
  readonly partitions: readonly PartitionLag[];
  readonly totalLag: number;
  readonly stalled: readonly ProjectionStall[];
}

/** What a caller is shown of the projection status. */
export interface ProjectionView {
  readonly healthy: boolean;
  readonly partitions: readonly PartitionLag[];
  readonly totalLag: number | null;
  readonly stalled: readonly ProjectionStall[];
}

/**
 * The ledger is one topic for every tenant: its offsets and lag measure all tenants' writes. An admin
 * (an operator of the tenant) sees them; anyone else sees only whether the projector is healthy, with
 * no partitions, `totalLag` null and no stalls — a tenant cannot watch another tenant's write volume.
 */
export const projectionViewFor = (s: ProjectionStatus, admin: boolean): ProjectionView =>
  admin ? s : { healthy: s.healthy, partitions: [], totalLag: null, stalled: [] };

/** Lag per partition = messages on the topic that the graph's checkpoint does not yet cover. */
export async function projectionStatus(
  ledger: Ledger,
  store: Checkpoints,
  topic: string,
  projector: () => ProjectionHealth,
): Promise<ProjectionStatus> {
  const [offsets, checkpoints] = await Promise.all([ledger.offsets(), store.checkpoints(topic)]);
  const cp = new Map(checkpoints.map((c) => [c.partition, BigInt(c.offset)]));
  const partitions = offsets.map((o) => {
    const c = cp.get(o.partition) ?? -1n;
    const hw = BigInt(o.highWatermark);
    const lag = hw - (c + 1n);
    return {
      partition: o.partition,
      checkpoint: String(c),
      highWatermark: String(hw),
      lag: Number(lag > 0n ? lag : 0n),
    };
  });
  const { healthy, stalled } = projector();
  return { healthy, partitions, totalLag: partitions.reduce((s, p) => s + p.lag, 0), stalled };
}
