import { logLevel } from 'kafkajs';

/**
 * Broker answers that KafkaJS logs as ERROR although it retries them, each with when it is expected. Why:
 * every first start against a new broker logged "Response GroupCoordinator … The group coordinator is not
 * available" as an error while the broker was still creating its offsets topic, and the consumer joined a
 * moment later. Nothing had failed: a retry that runs out fails the call that asked, and Muninn reports
 * that failure itself. So these are logged at info, anything else at the level KafkaJS gave it.
 * The messages are KafkaJS's own (src/protocol/error.js, all marked retriable there).
 */
export const RETRIED: ReadonlyArray<readonly [message: string, why: string]> = [
  ['The group coordinator is not available', 'a new broker creating its offsets topic'],
  ["The coordinator is loading and hence can't process requests for this group", 'a broker starting up'],
  ['This is not the correct coordinator for this group', 'the coordinator moved'],
  [
    'There is no leader for this topic-partition as we are in the middle of a leadership election',
    'a topic just created, or a broker restarting',
  ],
  ['This server does not host this topic-partition', 'a topic just created'],
  ['This server is not the leader for that topic-partition', 'leadership moved'],
];
const retried = new Set(RETRIED.map(([message]) => message));

/** The level Muninn logs a KafkaJS line at: info for a broker answer KafkaJS retries, else KafkaJS's own. */
export function kafkaLogLevel(level: logLevel, error: unknown): 'error' | 'warn' | 'info' {
  if (typeof error === 'string' && retried.has(error)) return 'info';
  return level <= logLevel.ERROR ? 'error' : 'warn';
}
