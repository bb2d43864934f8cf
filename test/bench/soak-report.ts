// The soak's figures: the Muninn process's RSS over time, latency percentiles, and the verdict.
import { readFileSync } from 'node:fs';
import { OP_KINDS, type LoadTally } from './soak-load.ts';
import type { LiveHeapSample } from './soak-inspect.ts';

export interface RssSample {
  /** Seconds since the load started. */
  readonly t: number;
  readonly kib: number;
}

/** A process's resident set (VmRSS) in KiB, from /proc; undefined once it has gone. */
export function readRssKiB(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Least-squares slope of y over x (NaN with fewer than two distinct x). */
export function slope(points: ReadonlyArray<{ readonly x: number; readonly y: number }>): number {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  return n >= 2 && sxx > 0 ? sxy / sxx : NaN;
}

export interface RssSummary {
  readonly samples: number;
  /** First sample at or after the warm-up, MiB. */
  readonly startMiB: number;
  readonly endMiB: number;
  readonly maxMiB: number;
  readonly growthMiB: number;
  readonly growthPct: number;
  /** Least-squares slope over the second half of the load, MiB per minute. */
  readonly secondHalfSlopeMiBPerMin: number;
  /**
   * The same over the lowest sample of each 30 s window (the floor after garbage collections): garbage
   * raises the peaks of the saw-tooth, a leak raises its floor. Reported, not judged.
   */
  readonly floorSlopeMiBPerMin: number;
}

const FLOOR_WINDOW_S = 30;

/**
 * "Memory stays flat": start (after the warm-up, when caches, JIT and pools have filled), end, max,
 * growth, and the trend over the second half of the run — a leak keeps climbing there, a filled cache does
 * not.
 */
export function summarizeRss(samples: readonly RssSample[], warmupS: number, loadS: number): RssSummary {
  const mib = (kib: number) => kib / 1024;
  const after = samples.filter((s) => s.t >= warmupS);
  const start = mib(after[0]?.kib ?? NaN);
  const end = mib(after[after.length - 1]?.kib ?? NaN);
  const half = samples.filter((s) => s.t >= loadS / 2).map((s) => ({ x: s.t / 60, y: mib(s.kib) }));
  const f = floors(half);
  return {
    samples: samples.length,
    startMiB: start,
    endMiB: end,
    maxMiB: Math.max(...after.map((s) => mib(s.kib))),
    growthMiB: end - start,
    growthPct: (100 * (end - start)) / start,
    secondHalfSlopeMiBPerMin: slope(half),
    // Two windows make a line through any two points: too few to call a trend.
    floorSlopeMiBPerMin: f.length >= 3 ? slope(f) : NaN,
  };
}

/** The lowest point of each FLOOR_WINDOW_S window (x in minutes): where the saw-tooth returns after GC. */
function floors(points: ReadonlyArray<{ x: number; y: number }>): Array<{ x: number; y: number }> {
  const lowest = new Map<number, { x: number; y: number }>();
  for (const p of points) {
    const w = Math.floor((p.x * 60) / FLOOR_WINDOW_S);
    if (!lowest.has(w) || p.y < lowest.get(w)!.y) lowest.set(w, p);
  }
  return [...lowest.values()];
}

export interface LiveHeapSummary {
  readonly samples: number;
  /** Live heap (V8 heap used + ArrayBuffer backing stores, right after a full collection) after the warm-up, MiB. */
  readonly startMiB: number;
  /** The same at the end of the load. */
  readonly endMiB: number;
  readonly growthMiB: number;
  /**
   * Least-squares slope of the live heap from the warm-up on, MiB per minute. Each sample follows a full
   * collection, so there is no saw-tooth to fit: a cache that fills flattens out, a leak keeps the slope.
   */
  readonly slopeMiBPerMin: number;
}

export function summarizeLiveHeap(samples: readonly LiveHeapSample[], warmupS: number): LiveHeapSummary {
  const pts = samples
    .filter((s) => s.t >= warmupS)
    .map((s) => ({ x: s.t / 60, y: s.usedMiB + s.backingMiB }));
  const start = pts[0]?.y ?? NaN;
  const end = pts[pts.length - 1]?.y ?? NaN;
  return {
    samples: pts.length,
    startMiB: start,
    endMiB: end,
    growthMiB: end - start,
    // Two points make a line through anything: too few to call a trend.
    slopeMiBPerMin: pts.length >= 3 ? slope(pts) : NaN,
  };
}

export const pct = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
};

export interface SoakReport {
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly callers: number;
  readonly embedder: string;
  readonly tenant: string;
  readonly tally: LoadTally;
  /** Events on the ledger for the soak's tenant, and how many distinct commands (idempotency keys). */
  readonly ledger: { readonly events: number; readonly keys: number };
  /** Receipts the projection wrote for the tenant (one per applied command), and whether it caught up. */
  readonly projection: {
    readonly receipts: number;
    readonly caughtUp: boolean;
    readonly drainSeconds: number;
  };
  /** Ledger keys without a receipt in the graph. */
  readonly unprojected: number;
  readonly rss: RssSummary;
  readonly liveHeap: LiveHeapSummary;
  /** Error lines the Muninn process logged, and its exit code after SIGTERM. */
  readonly serverErrors: readonly string[];
  readonly exitCode: number | null;
}

export const totals = (t: LoadTally) =>
  OP_KINDS.reduce(
    (s, k) => ({
      ok: s.ok + t.ops[k].ok,
      retryable: s.retryable + t.ops[k].retryable,
      unexpected: s.unexpected + t.ops[k].unexpected,
    }),
    { ok: 0, retryable: 0, unexpected: t.subscriptionErrors },
  );

/**
 * What makes the soak fail: unexpected answers, a ledger/projection mismatch, an unclean exit, or live
 * memory still climbing. "Memory stays flat" is judged on the live heap (sampled after full collections);
 * RSS is reported beside it, not judged: its saw-tooth (V8 grows its heap before collecting, the allocator
 * keeps freed pages) swamps any trend a 10-minute run could fit.
 */
export function soakProblems(r: SoakReport, maxSlopeMiBPerMin: number): string[] {
  const p: string[] = [];
  const u = totals(r.tally).unexpected;
  if (u > 0) p.push(`${u} unexpected answers`);
  if (!r.projection.caughtUp) p.push('the projection did not catch up with the ledger');
  if (r.ledger.keys !== r.projection.receipts || r.unprojected > 0)
    p.push(`ledger ${r.ledger.keys} commands ≠ projection ${r.projection.receipts} receipts`);
  if (r.ledger.events === 0) p.push('nothing reached the ledger');
  if (r.exitCode !== 0) p.push(`muninn exited with ${r.exitCode} after SIGTERM`);
  if (!(r.liveHeap.slopeMiBPerMin <= maxSlopeMiBPerMin))
    p.push(
      `the live heap grew ${f2(r.liveHeap.slopeMiBPerMin)} MiB/min after the warm-up (limit ${maxSlopeMiBPerMin})`,
    );
  return p;
}

const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '–');
const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '–');

export function formatSoak(r: SoakReport): string[] {
  const t = totals(r.tally);
  const lines = [
    `soak: ${r.seconds} s (warm-up ${r.warmupSeconds} s), ${r.callers} callers, embedder ${r.embedder}, tenant ${r.tenant}`,
    `  ${'op'.padEnd(13)} ${'ok'.padStart(6)} ${'retry'.padStart(6)} ${'unexp'.padStart(6)} ${'ok/s'.padStart(6)} ${'p50 ms'.padStart(8)} ${'p95 ms'.padStart(8)}  outcomes`,
  ];
  for (const k of OP_KINDS) {
    const s = r.tally.ops[k];
    const outcomes = [...s.outcomes].map(([o, n]) => `${o} ${n}`).join(', ');
    lines.push(
      `  ${k.padEnd(13)} ${String(s.ok).padStart(6)} ${String(s.retryable).padStart(6)} ${String(s.unexpected).padStart(6)} ` +
        `${(s.ok / r.seconds).toFixed(2).padStart(6)} ${f1(pct(s.ms, 50)).padStart(8)} ${f1(pct(s.ms, 95)).padStart(8)}  ${outcomes}`,
    );
  }
  const codes = [...r.tally.retryCodes].map(([c, n]) => `${c} ${n}`).join(', ') || 'none';
  lines.push(
    `  total: ${t.ok} ok (${(t.ok / r.seconds).toFixed(1)}/s), ${t.retryable} expected-retryable (${codes}), ${t.unexpected} unexpected`,
    `  subscription projectionLag: ${r.tally.subscriptionEvents} events, ${r.tally.subscriptionErrors} errors`,
    ...r.tally.unexpected.map((u) => `  unexpected: ${u}`),
    `  ledger: ${r.ledger.events} events (${r.ledger.keys} commands) — projection: ${r.projection.receipts} receipts, ` +
      `${r.unprojected} unprojected, caught up ${r.projection.caughtUp ? 'yes' : 'NO'} ${f1(r.projection.drainSeconds)} s after the load`,
    `  RSS of the muninn process: start ${f1(r.rss.startMiB)} MiB (after warm-up), end ${f1(r.rss.endMiB)}, max ${f1(r.rss.maxMiB)}; ` +
      `growth ${f1(r.rss.growthMiB)} MiB (${f1(r.rss.growthPct)} %); second-half slope ${r.rss.secondHalfSlopeMiBPerMin.toFixed(2)} MiB/min ` +
      `(of its ${FLOOR_WINDOW_S} s floors ${f2(r.rss.floorSlopeMiBPerMin)}; ${r.rss.samples} samples)`,
    `  live heap after a full GC (V8 heap used + ArrayBuffers): ${f1(r.liveHeap.startMiB)} MiB after warm-up, ` +
      `${f1(r.liveHeap.endMiB)} at the end (growth ${f1(r.liveHeap.growthMiB)} MiB); slope ${f2(r.liveHeap.slopeMiBPerMin)} MiB/min ` +
      `(${r.liveHeap.samples} samples)`,
    `  muninn logged ${r.serverErrors.length} error lines; exit code after SIGTERM ${r.exitCode}`,
    ...r.serverErrors.slice(0, 5).map((l) => `    ${l.slice(0, 300)}`),
  );
  return lines;
}
