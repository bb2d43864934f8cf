/** The tools the bridge ships (src/mcp/tools/*.graphql), as the unit and e2e tests expect them. */
export const ALL_TOOLS = [
  'approve',
  'expand',
  'feedback',
  'ingest_episode',
  'query',
  'recall',
  'reject',
  'remember',
  'review_queue',
];
export const WRITE_TOOLS = ['approve', 'feedback', 'ingest_episode', 'reject', 'remember'];
export const REVIEW_TOOLS = ['approve', 'reject', 'review_queue'];
