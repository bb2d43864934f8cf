import { cmp, METRICS, type MetricName, type QueryMetrics } from './metrics.ts';
import type { EvalRun, ScoredRun, SkippedRun } from './model.ts';
import type { RunComparison } from './runs.ts';

/**
 * Plain-text report of a run for the CLI: a header naming what was measured, one aggregate line, one line
 * per tag, the worst queries and, given a comparison with an earlier run, the deltas and the queries that
 * moved most. Pure: the same run always prints the same text.
 */

export interface ReportOptions {
  /** How many worst (and most-dropped) queries to list; default 5. */
  readonly worst?: number;
  readonly comparison?: RunComparison;
}

export function metricLabel(m: MetricName, k: number | 'k'): string {
  switch (m) {
    case 'hitAtK':
      return `hit@${k}`;
    case 'recallAnyAtK':
      return `recall_any@${k}`;
    case 'recallAllAtK':
      return `recall_all@${k}`;
    case 'recallAtK':
      return `recall@${k}`;
    case 'reciprocalRank':
      return 'MRR';
    case 'ndcgAt10':
      return 'nDCG@10';
  }
}

const num = (x: number): string => x.toFixed(3);
const signed = (x: number): string => (x > 0 ? '+' : x < 0 ? '-' : ' ') + Math.abs(x).toFixed(3);

/** Left-aligns the `left` columns (default: the first), right-aligns the rest (numbers); two spaces apart. */
export function table(rows: ReadonlyArray<readonly string[]>, left: readonly number[] = [0]): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((r) =>
    r
      .map((c, i) => (left.includes(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

const metricCells = (m: QueryMetrics, f: (x: number) => string = num): string[] =>
  METRICS.map((x) => f(m[x]));

function header(run: EvalRun): string {
  return (
    `golden set ${run.set.name} v${run.set.version} (sha256 ${run.set.hash.slice(0, 12)}) · ` +
    `recipe ${run.recipe} · k=${run.k} · started ${run.startedAt}`
  );
}

/**
 * The worst queries: lowest nDCG@10 first, then lowest MRR, then lowest recall@k, then id. nDCG leads
 * because it sees the whole top 10 and the grades; MRR breaks ties by where the first answer landed.
 */
export function worstQueries(run: ScoredRun, n: number): ScoredRun['perQuery'] {
  return [...run.perQuery]
    .sort(
      (a, b) =>
        a.metrics.ndcgAt10 - b.metrics.ndcgAt10 ||
        a.metrics.reciprocalRank - b.metrics.reciprocalRank ||
        a.metrics.recallAtK - b.metrics.recallAtK ||
        cmp(a.queryId, b.queryId),
    )
    .slice(0, Math.max(0, n));
}

const quote = (s: string, max = 60): string => `"${s.length > max ? `${s.slice(0, max - 1)}…` : s}"`;

function skippedLines(run: SkippedRun): string[] {
  const shown = run.missing.slice(0, 20);
  const more = run.missing.length - shown.length;
  return [
    `SKIPPED (not scored): ${run.reason}`,
    `missing fixtures: ${shown.join(', ')}${more > 0 ? ` … and ${more} more` : ''}`,
  ];
}

/** The aggregate line and one per tag, at the run's k. */
function aggregateLines(run: ScoredRun, labels: readonly string[]): string[] {
  const lines = table([
    ['', 'n', ...labels],
    ['all', String(run.aggregate.n), ...metricCells(run.aggregate.means)],
    ...Object.keys(run.byTag)
      .sort(cmp)
      .map((tag) => [`tag ${tag}`, String(run.byTag[tag]!.n), ...metricCells(run.byTag[tag]!.means)]),
  ]);
  const ownK = run.perQuery.filter((q) => q.k !== run.k);
  if (ownK.length > 0) {
    lines.push(`(scored at their own k: ${ownK.map((q) => `${q.queryId} @${q.k}`).join(', ')})`);
  }
  return lines;
}

function worstLines(run: ScoredRun, n: number, perQueryLabels: readonly string[]): string[] {
  const worst = worstQueries(run, n);
  if (worst.length === 0) return [];
  return [
    '',
    `worst ${worst.length} of ${run.perQuery.length} queries:`,
    ...table(
      [
        ['query', 'k', ...perQueryLabels, ''],
        ...worst.map((q) => [q.queryId, String(q.k), ...metricCells(q.metrics), quote(q.query)]),
      ],
      [0, METRICS.length + 2],
    ),
  ];
}

function comparisonLines(
  c: RunComparison,
  n: number,
  labels: readonly string[],
  perQueryLabels: readonly string[],
): string[] {
  const lines = ['', `compared with ${c.previous.recipe} run started ${c.previous.startedAt}:`];
  if (!c.sameSet) lines.push('note: the golden set changed between the runs (different content hash)');
  lines.push(
    ...table([
      ['', ...labels],
      ['Δ all', ...metricCells(c.aggregateDelta, signed)],
    ]),
  );
  const dropped = c.queries.filter((q) => q.worstDrop < 0).slice(0, Math.max(0, n));
  if (dropped.length === 0) {
    lines.push('no query dropped');
  } else {
    lines.push('', 'queries that dropped most:');
    lines.push(
      ...table(
        [
          ['query', 'worst', ...perQueryLabels, 'lost'],
          ...dropped.map((q) => [
            q.queryId,
            q.worstMetric ? metricLabel(q.worstMetric, 'k') : '',
            ...metricCells(q.delta, signed),
            q.lost.join(','),
          ]),
        ],
        [0, 1, METRICS.length + 2],
      ),
    );
  }
  if (c.added.length > 0) lines.push(`new queries: ${c.added.join(', ')}`);
  if (c.removed.length > 0) lines.push(`removed queries: ${c.removed.join(', ')}`);
  return lines;
}

export function formatRun(run: EvalRun, options: ReportOptions = {}): string {
  const lines = [header(run)];
  if (run.status === 'skipped') return `${[...lines, ...skippedLines(run)].join('\n')}\n`;
  const n = options.worst ?? 5;
  const labels = METRICS.map((m) => metricLabel(m, run.k));
  // Per-query rows are each at their own k (the column `k` says which).
  const perQueryLabels = METRICS.map((m) => metricLabel(m, 'k'));
  lines.push('', ...aggregateLines(run, labels), ...worstLines(run, n, perQueryLabels));
  if (options.comparison) lines.push(...comparisonLines(options.comparison, n, labels, perQueryLabels));
  return `${lines.join('\n')}\n`;
}
