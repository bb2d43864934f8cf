import type { RecordsService } from '../records/service.ts';
import type { AnalyticsService } from '../records/analytics.ts';
import type { StewardshipService } from '../records/stewardship.ts';
import type { WriteService } from '../ingest/write-service.ts';
import type { RecallService } from '../recall/service.ts';
import type { ErasureService } from '../lifecycle/erasure.ts';
import type { HoldService } from '../lifecycle/holds.ts';
import type { ProjectionStatus } from '../records/projection-status.ts';

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
