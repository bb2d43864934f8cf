import type { IResolvers } from '@graphql-tools/utils';
import type { ApiContext } from './context.ts';
import { DateTime, JSONScalar } from './scalars.ts';
import type { ApiServices } from './services.ts';
import { buildRecordResolvers } from './record-resolvers.ts';
import { buildWriteResolvers } from './write-resolvers.ts';
import { buildLifecycleResolvers } from './lifecycle-resolvers.ts';
import { buildReviewResolvers } from './review-resolvers.ts';
import { buildProjectionResolvers } from './projection-resolvers.ts';
import { buildAnalyticsResolvers } from './analytics-resolvers.ts';
import { buildStewardResolvers } from './steward-resolvers.ts';

/** Every resolver of schema.graphql, by area; makeExecutableSchema merges them into one map. */
export function buildResolvers(s: ApiServices): Array<IResolvers<unknown, ApiContext>> {
  return [
    { DateTime, JSON: JSONScalar },
    buildRecordResolvers(s),
    buildWriteResolvers(s),
    buildLifecycleResolvers(s),
    buildReviewResolvers(s),
    buildProjectionResolvers(s),
    buildAnalyticsResolvers(s),
    buildStewardResolvers(s),
  ];
}
