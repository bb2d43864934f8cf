// Where a bench's writes spent their time, per stage, from the servers' own Prometheus figures
// (muninn_write_stage_duration_seconds: check, turn, embed, lookup, decide, append, await): the mean
// of each stage over the writes between two scrapes, summed over every server scraped.

/** Per stage: seconds summed and writes counted, as of one scrape. */
export type StageTotals = Map<string, { sum: number; count: number }>;

const LINE = /^muninn_write_stage_duration_seconds_(sum|count)\{command="propose",stage="([a-z_]+)"\} (\S+)$/;

/** Reads every server's propose stage totals and adds them up. */
export async function scrapeStages(metricsUrls: readonly string[]): Promise<StageTotals> {
  const out: StageTotals = new Map();
  for (const url of metricsUrls) {
    const text = await (await fetch(url)).text();
    for (const line of text.split('\n')) {
      const m = LINE.exec(line);
      if (!m) continue;
      const t = out.get(m[2]!) ?? { sum: 0, count: 0 };
      t[m[1] as 'sum' | 'count'] += Number(m[3]);
      out.set(m[2]!, t);
    }
  }
  return out;
}

/** "check 1.2, turn 0.4, …" in ms: each stage's mean over the writes between `before` and `after`. */
export function stageMeans(before: StageTotals, after: StageTotals): string {
  const parts: string[] = [];
  for (const [stage, t] of after) {
    const b = before.get(stage) ?? { sum: 0, count: 0 };
    const n = t.count - b.count;
    if (n > 0) parts.push(`${stage} ${(((t.sum - b.sum) / n) * 1000).toFixed(1)}`);
  }
  return parts.length ? parts.join(', ') : 'none scraped';
}
