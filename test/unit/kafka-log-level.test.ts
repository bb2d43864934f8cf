import { createRequire } from 'node:module';
import { logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { kafkaLogLevel, RETRIED } from '../../src/adapters/kafka/log-level.ts';

/** KafkaJS's table of broker errors (src/protocol/error.js): its messages and whether it retries them. */
const { errorCodes } = createRequire(import.meta.url)('kafkajs/src/protocol/error.js') as {
  errorCodes: Array<{ type: string; message: string; retriable: boolean }>;
};

describe("KafkaJS's log lines at the level an operator should see", () => {
  it('a broker answer KafkaJS retries (the first start against a new broker) is info, not an error', () => {
    expect(kafkaLogLevel(logLevel.ERROR, 'The group coordinator is not available')).toBe('info');
    expect(kafkaLogLevel(logLevel.WARN, 'This server does not host this topic-partition')).toBe('info');
  });

  it('any other error stays an error, and a warning a warning', () => {
    expect(kafkaLogLevel(logLevel.ERROR, 'The group is rebalancing, so a rejoin is needed')).toBe('error');
    expect(kafkaLogLevel(logLevel.ERROR, 'Connection timeout')).toBe('error');
    expect(kafkaLogLevel(logLevel.ERROR, undefined)).toBe('error');
    expect(kafkaLogLevel(logLevel.WARN, 'anything')).toBe('warn');
  });

  it("every answer logged at info is one of KafkaJS's own messages that it marks retriable", () => {
    for (const [message] of RETRIED)
      expect(errorCodes.find((e) => e.message === message)?.retriable, message).toBe(true);
  });
});
