/**
 * Evaluation runs on disk, and comparing two of them. One JSON file per run under `<dir>/<set name>/`,
 * named by its start instant and recipe, so `ls` lists a set's history in time order. Each file holds the
 * per-query breakdown, the recipe, k and the golden set's name, version and content hash — no git state —
 * so a regression can be traced to the query that moved long after the commit is gone.
 */
import { join } from 'node:path';
import { badInput } from '../domain/errors.ts';
import type { TextFiles } from '../ports/text-files.ts';
import { GoldenSetName } from './golden.ts';
import { cmp, METRICS, type MetricName, type QueryMetrics } from './metrics.ts';
import { EvalRun, RecipeName, type ScoredRun } from './model.ts';

/** `2026-11-30T10-15-00.123Z-hybrid.json`: ':' is not allowed in file names everywhere. */
export function runFileName(run: Pick<EvalRun, 'startedAt' | 'recipe'>): string {
  const recipe = RecipeName.safeParse(run.recipe);
  if (!recipe.success) throw badInput('a recipe name is a slug', { recipe: String(run.recipe) });
  if (!/^[0-9T:.Z+-]+$/.test(run.startedAt))
    throw badInput('startedAt is not an instant', { startedAt: run.startedAt });
  return `${run.startedAt.replace(/:/g, '-')}-${recipe.data}.json`;
}

/** The directory holding a set's runs. The name is re-checked: it becomes a path. */
export function runDir(dir: string, setName: string): string {
  const name = GoldenSetName.safeParse(setName);
  if (!name.success) throw badInput('a golden set name is a slug', { set: setName });
  return join(dir, name.data);
}

/**
 * Writes a run atomically (private temp file → fsync → rename → fsync dir): a crash leaves no file or the
 * whole file, never a torn one that would fail every later listing. Returns the path written.
 */
export async function writeRun(files: TextFiles, dir: string, run: EvalRun): Promise<string> {
  const valid = validRun(run, '(run to write)');
  const path = join(runDir(dir, valid.set.name), runFileName(valid));
  await files.write(path, `${JSON.stringify(valid, null, 2)}\n`);
  return path;
}

/** Reads one stored run. A file that does not parse is an error naming the file (fail closed). */
export async function readRun(files: TextFiles, path: string): Promise<EvalRun> {
  const text = await files.read(path);
  if (text === undefined) throw Object.assign(new Error(`no eval run at ${path}`), { code: 'ENOENT' });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw badInput(`stored eval run ${path} is not JSON`, { path });
  }
  return validRun(json, path);
}

function validRun(json: unknown, where: string): EvalRun {
  const r = EvalRun.safeParse(json);
  if (!r.success) {
    const problems = r.error.issues.map((i) => `${i.path.join('.') || '(run)'}: ${i.message}`);
    throw badInput(`eval run ${where} is invalid: ${problems.join('; ')}`, { path: where, problems });
  }
  return r.data;
}

export interface StoredRun {
  readonly path: string;
  readonly run: EvalRun;
}

/** The runs of one set, oldest first (by start instant, then recipe). No directory yet = no runs. */
export async function listRuns(files: TextFiles, dir: string, setName: string): Promise<StoredRun[]> {
  const target = runDir(dir, setName);
  const names = (await files.list(target)) ?? [];
  const out: StoredRun[] = [];
  for (const name of names.filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort(cmp)) {
    const path = join(target, name);
    out.push({ path, run: await readRun(files, path) });
  }
  return out.sort((a, b) => cmp(a.run.startedAt, b.run.startedAt) || cmp(a.run.recipe, b.run.recipe));
}

/** The latest scored run of the same set and recipe that started before `current`: the baseline. */
export function previousScored(runs: readonly StoredRun[], current: EvalRun): ScoredRun | undefined {
  let best: ScoredRun | undefined;
  for (const { run } of runs) {
    if (run.status !== 'scored' || run.set.name !== current.set.name || run.recipe !== current.recipe)
      continue;
    if (run.startedAt >= current.startedAt) continue;
    if (!best || run.startedAt > best.startedAt) best = run;
  }
  return best;
}

export interface QueryDelta {
  readonly queryId: string;
  readonly query: string;
  readonly tags: readonly string[];
  readonly previous: QueryMetrics;
  readonly current: QueryMetrics;
  /** current − previous, per metric. */
  readonly delta: QueryMetrics;
  /** The most negative delta (0 when nothing dropped) and its metric (null when nothing dropped). */
  readonly worstDrop: number;
  readonly worstMetric: MetricName | null;
  /** Relevant ids in the previous run's top k that the current top k no longer has. */
  readonly lost: readonly string[];
  /** Relevant ids in the current top k that the previous one lacked. */
  readonly gained: readonly string[];
}

export interface RunComparison {
  readonly previous: { readonly startedAt: string; readonly recipe: string; readonly k: number };
  readonly current: { readonly startedAt: string; readonly recipe: string; readonly k: number };
  /** Both runs measured the same golden-set content (equal hashes); otherwise deltas may be judgements. */
  readonly sameSet: boolean;
  readonly aggregateDelta: QueryMetrics;
  /** Queries present in both runs, largest drop first; improvements last. */
  readonly queries: readonly QueryDelta[];
  /** Query ids only in the current run / only in the previous run. */
  readonly added: readonly string[];
  readonly removed: readonly string[];
}

const diff = (a: QueryMetrics, b: QueryMetrics): QueryMetrics =>
  Object.fromEntries(METRICS.map((m) => [m, b[m] - a[m]])) as Record<MetricName, number>;

const sum = (m: QueryMetrics): number => METRICS.reduce((s, x) => s + m[x], 0);

function relevantInTopK(r: ScoredRun['perQuery'][number]): Set<string> {
  const rel = new Set(r.relevant);
  return new Set(r.returned.slice(0, r.k).filter((id) => rel.has(id)));
}

/**
 * Per-query metric deltas between two scored runs, sorted so the query that dropped most comes first
 * (by its worst single metric, then by the sum of its deltas, then by id): the regression's address.
 */
export function compareRuns(previous: ScoredRun, current: ScoredRun): RunComparison {
  const before = new Map(previous.perQuery.map((q) => [q.queryId, q]));
  const after = new Set(current.perQuery.map((q) => q.queryId));
  const queries: QueryDelta[] = [];
  const added: string[] = [];
  for (const cur of current.perQuery) {
    const prev = before.get(cur.queryId);
    if (!prev) {
      added.push(cur.queryId);
      continue;
    }
    const delta = diff(prev.metrics, cur.metrics);
    let worstDrop = 0;
    let worstMetric: MetricName | null = null;
    for (const m of METRICS) {
      if (delta[m] < worstDrop) {
        worstDrop = delta[m];
        worstMetric = m;
      }
    }
    const had = relevantInTopK(prev);
    const has = relevantInTopK(cur);
    queries.push({
      queryId: cur.queryId,
      query: cur.query,
      tags: cur.tags,
      previous: prev.metrics,
      current: cur.metrics,
      delta,
      worstDrop,
      worstMetric,
      lost: [...had].filter((id) => !has.has(id)).sort(cmp),
      gained: [...has].filter((id) => !had.has(id)).sort(cmp),
    });
  }
  queries.sort(
    (a, b) => a.worstDrop - b.worstDrop || sum(a.delta) - sum(b.delta) || cmp(a.queryId, b.queryId),
  );
  return {
    previous: { startedAt: previous.startedAt, recipe: previous.recipe, k: previous.k },
    current: { startedAt: current.startedAt, recipe: current.recipe, k: current.k },
    sameSet: previous.set.hash === current.set.hash,
    aggregateDelta: diff(previous.aggregate.means, current.aggregate.means),
    queries,
    added: added.sort(cmp),
    removed: previous.perQuery
      .map((q) => q.queryId)
      .filter((id) => !after.has(id))
      .sort(cmp),
  };
}
