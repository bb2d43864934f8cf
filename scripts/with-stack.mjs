#!/usr/bin/env node
// Runs a command with the local Neo4j and Kafka: `node scripts/with-stack.mjs <command> [args…]`.
// Uses NEO4J_URI / KAFKA_BROKERS when both are set; otherwise installs (first run) and starts the local
// stack, reusing servers that already run. On exit or Ctrl-C it stops only the servers it started.
import { spawn } from 'node:child_process';
import { ensureLocalEnv } from './local-env.mjs';

const [cmd, ...args] = process.argv.slice(2);
if (!cmd) {
  process.stderr.write('usage: node scripts/with-stack.mjs <command> [args…]\n');
  process.exit(2);
}
const stack = await ensureLocalEnv();

const child = spawn(cmd, args, { stdio: 'inherit', env: process.env });
let signalled = false;
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    signalled = true;
    child.kill('SIGTERM');
  });
}
const code = await new Promise((resolve) => child.on('exit', (c, s) => resolve(c ?? (s ? 1 : 0))));
if (stack?.startedByUs.length)
  process.stderr.write(`[stack] stopping what this command started: ${stack.startedByUs.join(', ')}\n`);
await stack?.stop();
process.exit(signalled ? 0 : code);
