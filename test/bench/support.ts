import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load, type Config } from '../../src/config/index.ts';
import { ensureDevKeys } from '../../src/adapters/auth/dev-keys.ts';
import { parseLocomo, type LocomoSet } from '../../src/ingest/locomo.ts';

/**
 * A policy file in `dir` whose write budgets never bind, for benchmarks that measure the machine rather
 * than the default budgets (per writer and namespace: 10 writes/s, burst 200). Returns its path.
 */
export function unboundedBudgetsPolicy(dir: string): string {
  const file = join(dir, 'bench-policy.json');
  const unbounded = { perMinute: 1e9, burst: 1e9 };
  writeFileSync(
    file,
    JSON.stringify({ budgets: { perWriterPerNamespace: unbounded, perNamespace: unbounded } }),
  );
  return file;
}

/**
 * A benchmark's config: the servers from the environment, its own topic, group and state dir (dev keys),
 * and an admission policy whose budgets fit a bulk import.
 */
export async function benchConfig(name: string, env: Record<string, string> = {}): Promise<Config> {
  const suffix = randomUUID().slice(0, 8);
  const stateDir = mkdtempSync(join(tmpdir(), `muninn-${name}-`));
  const policy = join(stateDir, 'policy.json');
  const bulk = { perMinute: 1e7, burst: 1e6 };
  writeFileSync(policy, JSON.stringify({ budgets: { perWriterPerNamespace: bulk, perNamespace: bulk } }));
  await ensureDevKeys(stateDir);
  return load({
    ...process.env,
    MUNINN_ENV: 'test',
    MUNINN_PORT: '0',
    MUNINN_STATE_DIR: stateDir,
    MUNINN_LOG_LEVEL: 'silent',
    MUNINN_POLICY_FILE: policy,
    MUNINN_LEDGER_TOPIC: `muninn.${name}.${suffix}`,
    MUNINN_DLQ_TOPIC: `muninn.${name}.${suffix}.dlq`,
    MUNINN_PROJECTOR_GROUP: `${name}-${suffix}`,
    MUNINN_AWAIT_TIMEOUT_MS: '120000',
    ...env,
  });
}

/** The LoCoMo development split from ../shared/eval/locomo/ beside the checkout (a worktree may sit deeper). */
export function readLocomoDev(): LocomoSet {
  const file = [1, 2, 3, 4]
    .map((up) => new URL(`${'../'.repeat(up + 1)}shared/eval/locomo/locomo-dev.json`, import.meta.url))
    .find((u) => existsSync(u));
  if (!file) throw new Error('locomo-dev.json not found in ../shared/eval/locomo/');
  return parseLocomo(JSON.parse(readFileSync(file, 'utf8')));
}
