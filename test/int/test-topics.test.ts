import { describe, expect, it } from 'vitest';
import { load } from '../../src/config/index.ts';
import { endpoints, testConfig } from '../support/harness.ts';

/**
 * `npm start` and `npm test` share the local servers but not a key store: each seals its events with its
 * own keys. On one topic and consumer group, a test app's projector met `npm start`'s events and retried
 * them for ever (a key it never held), and `npm start` met the tests'. So the tests keep to their own.
 */
describe('the tests and the product on one machine', () => {
  it("a test app's ledger topic, dead-letter topic and projector group are never the product's defaults", () => {
    const product = load({ ...endpoints() }).kafka;
    const tests = testConfig().kafka;
    expect(tests.topic).not.toBe(product.topic);
    expect(tests.dlqTopic).not.toBe(product.dlqTopic);
    expect(tests.groupId).not.toBe(product.groupId);
  });
});
