#!/usr/bin/env node
// `npm start`: Muninn with its local Neo4j and Kafka. Uses NEO4J_URI / KAFKA_BROKERS when both are set;
// otherwise installs (first run) and starts the local stack, reusing servers that already run.
// Ctrl-C stops Muninn and then only the servers this command started.
import { spawn } from 'node:child_process';
import { ensureStack } from './stack.mjs';

const root = new URL('..', import.meta.url).pathname;
let stack;
if (!process.env.NEO4J_URI || !process.env.KAFKA_BROKERS) {
  stack = await ensureStack();
  process.env.NEO4J_URI = stack.neo4jUri;
  process.env.KAFKA_BROKERS = stack.kafkaBrokers;
}

const child = spawn(
  process.execPath,
  ['--import', 'tsx', 'src/cli/main.ts', 'serve', ...process.argv.slice(2)],
  {
    cwd: root,
    stdio: 'inherit',
    env: process.env,
  },
);
let signalled = false;
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    signalled = true;
    child.kill('SIGTERM');
  });
}
const code = await new Promise((resolve) => child.on('exit', (c, s) => resolve(c ?? (s ? 1 : 0))));
if (stack) {
  process.stderr.write('[start] stopping the servers this command started\n');
  await stack.stop();
}
process.exit(signalled ? 0 : code);
