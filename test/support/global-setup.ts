import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

/**
 * Integration tests run against real Neo4j and Kafka. With NEO4J_URI and KAFKA_BROKERS set they use
 * those servers; otherwise they start the local stack (and stop what they started).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let stop = async (): Promise<void> => undefined;
  if (!process.env['NEO4J_URI'] || !process.env['KAFKA_BROKERS']) {
    const stack = await import('../../scripts/stack.mjs');
    const s = await stack.ensureStack({ log: (m) => process.stderr.write(`[stack] ${m}\n`) });
    process.env['NEO4J_URI'] = s.neo4jUri;
    process.env['KAFKA_BROKERS'] = s.kafkaBrokers;
    stop = s.stop;
  }
  // One key store for every Muninn of the run, as in production (one KMS for all processes): the apps of a
  // file share the ledger topic and its consumer group, so one app's projector opens another's sealed events.
  process.env['MUNINN_KEY_DIR'] ??= mkdtempSync(join(tmpdir(), 'muninn-test-keys-'));
  project.provide('keyDir', process.env['MUNINN_KEY_DIR']);
  project.provide('neo4jUri', process.env['NEO4J_URI']!);
  project.provide('kafkaBrokers', process.env['KAFKA_BROKERS']!);
  return stop;
}

declare module 'vitest' {
  export interface ProvidedContext {
    neo4jUri: string;
    kafkaBrokers: string;
    keyDir: string;
  }
}
