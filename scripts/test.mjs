#!/usr/bin/env node
// The whole test suite: static checks (types, lint, format, generated files) and every vitest project,
// unit and integration, against real Neo4j and Kafka. Uses NEO4J_URI / KAFKA_BROKERS when both are set;
// otherwise starts the local stack (scripts/stack.mjs) and stops what it started.
// Ends with one plain line: `tests: N passed, N failed`.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { ensureLocalEnv } from './local-env.mjs';

const root = new URL('..', import.meta.url).pathname;
const extra = process.argv.slice(2);
const results = { passed: 0, failed: 0 };

function run(name, cmd, args, env = {}) {
  process.stderr.write(`\n── ${name}: ${cmd} ${args.join(' ')}\n`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  return r.status === 0;
}

function check(name, cmd, args) {
  if (run(name, cmd, args)) results.passed++;
  else {
    results.failed++;
    process.stderr.write(`✗ ${name} failed\n`);
  }
}

const stack = await ensureLocalEnv();

try {
  if (extra.length === 0) {
    check('typecheck', 'npx', ['tsc', '--noEmit']);
    check('lint', 'npx', ['eslint', '.']);
    check('format', 'npx', ['prettier', '--check', '.']);
    check('generated files', 'node', ['--import', 'tsx', 'scripts/gen.ts', '--check']);
  }
  mkdirSync(`${root}test-results`, { recursive: true });
  const out = `${root}test-results/vitest.json`;
  rmSync(out, { force: true });
  const vitestOk = run('vitest', 'npx', [
    'vitest',
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${out}`,
    ...extra,
  ]);
  try {
    const report = JSON.parse(readFileSync(out, 'utf8'));
    results.passed += report.numPassedTests;
    results.failed += report.numFailedTests;
    // A file that failed without a failed test (it did not load, or a beforeAll threw and its tests
    // were skipped) counts as one failure: otherwise a broken file would leave the total green.
    const brokenFiles = report.testResults.filter(
      (f) => f.status === 'failed' && !f.assertionResults.some((a) => a.status === 'failed'),
    ).length;
    results.failed += brokenFiles;
    // A worker that died (out of memory, say) or an unhandled error fails vitest's run while its report
    // may hold no failed test at all: the exit status counts too.
    if (!vitestOk && report.numFailedTests + brokenFiles === 0) {
      results.failed++;
      process.stderr.write(
        '✗ vitest exited non-zero with no failed test in its report (a crashed worker?)\n',
      );
    }
  } catch {
    results.failed++;
    process.stderr.write('✗ vitest produced no report\n');
  }
} finally {
  await stack?.stop();
}

process.stdout.write(`tests: ${results.passed} passed, ${results.failed} failed\n`);
process.exit(results.failed === 0 && results.passed > 0 ? 0 : 1);
