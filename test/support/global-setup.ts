import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
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
  // One key store for every Muninn that uses these servers, as in production (one KMS for all processes):
  // the apps of a file share the ledger topic and its consumer group, so one app's projector opens another's
  // sealed events — and a run that wipes the graph replays the shared topic from its start, including
  // earlier runs' events, which a projector refuses to open without their keys (lifecycle/sealing.ts).
  const servers = createHash('sha256')
    .update(`${process.env['NEO4J_URI']}\u0000${process.env['KAFKA_BROKERS']}`)
    .digest('hex')
    .slice(0, 12);
  process.env['MUNINN_KEY_DIR'] ??= join(tmpdir(), `muninn-test-keys-${servers}`);
  mkdirSync(process.env['MUNINN_KEY_DIR'], { recursive: true, mode: 0o700 });
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
