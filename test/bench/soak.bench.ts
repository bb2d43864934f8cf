// npm run bench:soak — issue #15: a bounded sustained-load run against the real stack (test/bench/soak.ts).
// `muninn serve` runs as a child process; SOAK_CALLERS (4) closed-loop callers of one tenant propose
// (awaited and not), revise, retract, recall and read records through GraphQL over HTTP for SOAK_SECONDS
// (600), pausing SOAK_THINK_MS (50) on average between calls, while one graphql-ws subscription follows
// the projection lag. Prints ops per kind with p50/p95, ok / expected-retryable / unexpected counts, the
// ledger's events against the projection's receipts for the tenant, the process's RSS (sampled every
// SOAK_SAMPLE_MS, 2000: start after SOAK_WARMUP_SECONDS — 60, at most a sixth of the run — end, max,
// growth, second-half slope) and its live heap: every SOAK_LIVE_HEAP_MS (30,000) the soak asks the child's
// V8, through the inspector on a loopback port, for a full collection and then its heap usage (used +
// ArrayBuffers). Exits 1 on any unexpected answer, a ledger / projection mismatch, an unclean exit, or a
// live-heap slope after the warm-up above SOAK_MAX_LIVE_HEAP_SLOPE_MIB_PER_MIN (1 MiB/min — 60 MiB an
// hour). RSS is reported, not judged: it saw-tooths by 100+ MiB (V8 grows its heap before collecting,
// the allocator keeps freed pages), which swamps any trend a 10-minute run could fit.
// The server embeds with MUNINN_EMBEDDER (default: the local MiniLM, the realistic and CPU-heavy choice;
// MUNINN_EMBEDDER=hashing takes the model out and soaks the rest of the path at a higher rate).
import { cpus, loadavg } from 'node:os';
import { runSoak } from './soak.ts';
import { formatSoak, soakProblems } from './soak-report.ts';

const num = (name: string, dflt: number): number => {
  const v = Number(process.env[name] ?? dflt);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a non-negative number`);
  return v;
};
const seconds = num('SOAK_SECONDS', 600);
const maxSlope = num('SOAK_MAX_LIVE_HEAP_SLOPE_MIB_PER_MIN', 1);
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

console.log(
  `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}; load average ${load()}`,
);
const report = await runSoak({
  seconds,
  warmupSeconds: num('SOAK_WARMUP_SECONDS', Math.min(60, Math.round(seconds / 6))),
  callers: num('SOAK_CALLERS', 4),
  thinkMs: num('SOAK_THINK_MS', 50),
  sampleMs: num('SOAK_SAMPLE_MS', 2000),
  liveHeapMs: num('SOAK_LIVE_HEAP_MS', 30_000),
  log: (l) => console.log(l),
});
for (const line of formatSoak(report)) console.log(line);
console.log(`load average at the end: ${load()}`);
const problems = soakProblems(report, maxSlope);
console.log(problems.length === 0 ? 'soak: PASS' : `soak: FAIL — ${problems.join('; ')}`);
process.exit(problems.length === 0 ? 0 : 1);
