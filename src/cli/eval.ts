import { parseArgs } from 'node:util';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config/index.ts';
import { buildServices, connectAdapters, createBaselineEmbedder, evalPorts } from '../compose.ts';
import { ProjectionWaiter } from '../adapters/projection-waiter.ts';
import { createLogger } from '../adapters/logger.ts';
import { servicePrincipal } from '../domain/principal.ts';
import { parseGoldenSet } from '../eval/golden.ts';
import { evaluate } from '../eval/evaluate.ts';
import { formatLocomo, parseLocomoFile, runLocomo, serviceLocomoPorts } from '../eval/locomo.ts';

/** The services of one command run (no API, no projector: those run in `muninn serve`), closed after. */
async function withServices<T>(
  c: Config,
  fn: (
    built: Awaited<ReturnType<typeof buildServices>>,
    a: ReturnType<typeof connectAdapters>,
    logger: ReturnType<typeof createLogger>,
  ) => Promise<T>,
): Promise<T> {
  const logger = createLogger(c.log.level === 'info' ? 'warn' : c.log.level);
  const a = connectAdapters(c, logger);
  const waiter = new ProjectionWaiter(a.store, c.kafka.topic);
  let embedder: { close?: () => Promise<void> } | undefined;
  try {
    await a.store.migrate();
    await a.ledger.ensureTopics();
    const built = await buildServices(c, a.store, a.ledger, waiter, logger);
    embedder = built.embedder;
    return await fn(built, a, logger);
  } finally {
    waiter.close();
    await embedder?.close?.();
    await a.ledger.close();
    await a.store.close();
  }
}

/** `muninn eval [--set F]… | --locomo F`: the golden sets, or the LoCoMo benchmark, scored per recipe. */
export async function evalCmd(args: string[], c: Config): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      locomo: { type: 'string' },
      namespace: { type: 'string', default: 'locomo' },
      conversations: { type: 'string' },
      set: { type: 'string', multiple: true },
      recipes: { type: 'string', default: 'hybrid,bm25,vector' },
      seed: { type: 'boolean', default: false },
      runs: { type: 'string' },
      tenant: { type: 'string', default: 'eval' },
      k: { type: 'string' },
    },
  });
  if (values.locomo) return locomoCmd(c, values.locomo, values);
  const files = values.set?.length
    ? values.set
    : (await readdir('test/fixtures/golden'))
        .filter((f) => f.endsWith('.json'))
        .map((f) => join('test/fixtures/golden', f));
  const sets = await Promise.all(
    files.map(async (f) => parseGoldenSet(JSON.parse(await readFile(f, 'utf8')))),
  );
  return withServices(c, async (built, { store }) => {
    const principal = servicePrincipal('eval', values.tenant);
    const results = await evaluate(sets, evalPorts(store, built, principal), {
      recipes: values.recipes
        .split(',')
        .map((r) => r.trim())
        .filter(Boolean),
      seed: values.seed,
      runsDir: values.runs ?? join(c.stateDir, 'eval-runs'),
      ...(values.k ? { k: Number(values.k) } : {}),
    });
    for (const r of results) process.stdout.write(`${r.report}\nrun saved: ${r.path}\n\n`);
    return 0;
  });
}

async function locomoCmd(
  c: Config,
  file: string,
  o: { namespace: string; conversations?: string; recipes: string; tenant: string; k?: string },
): Promise<number> {
  const only = o.conversations?.split(',').map((x) => x.trim());
  const full = parseLocomoFile(await readFile(file, 'utf8'));
  const set = {
    episodes: full.episodes.filter((e) => !only || only.includes(e.sampleId)),
    questions: full.questions.filter((q) => !only || only.includes(q.sampleId)),
  };
  const k = o.k ? Number(o.k) : 10;
  const baselineEmbedder = await createBaselineEmbedder(c);
  try {
    return await withServices(c, async (built) => {
      const principal = servicePrincipal('eval', o.tenant);
      const report = await runLocomo(
        set,
        {
          ...serviceLocomoPorts(built, principal, baselineEmbedder),
          progress: (line) => process.stderr.write(`\r${line}   `),
        },
        {
          recipes: o.recipes.split(',').map((r) => r.trim()),
          k,
          namespaceOf: (id) => `${o.namespace}/${id}`,
        },
      );
      process.stderr.write('\n');
      const title = `${file}: ${report.questions} questions with evidence, k=${k}, tenant ${principal.tenant}, namespace ${o.namespace}/<sample_id>`;
      process.stdout.write(`${formatLocomo(report, title)}\n`);
      return 0;
    });
  } finally {
    await baselineEmbedder.close?.();
  }
}
