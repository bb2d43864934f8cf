// npm run bench:ingest — turns/s and records/s through `ingestEpisode` (GraphQL, loopback) with the default
// extractor and the local embedder, over LoCoMo sessions (../shared/eval/locomo/), and where the time goes
// (check, extract, turn, embed, lookup, decide, append, await). Prints figures; asserts nothing.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { PassThrough } from 'node:stream';
import { benchConfig } from './support.ts';
import { startMuninn } from '../../src/main.ts';
import { createLogger } from '../../src/adapters/logger.ts';
import { signDevToken } from '../../src/adapters/auth/dev-keys.ts';
import { locomoNamespace, parseLocomo } from '../../src/ingest/locomo.ts';

const SESSIONS = Number(process.env['BENCH_SESSIONS'] ?? 40);
const config = await benchConfig('bench-ingest', {
  MUNINN_LOG_LEVEL: 'info',
  MUNINN_AWAIT_TIMEOUT_MS: process.env['BENCH_AWAIT_MS'] ?? '120000',
});
const stateDir = config.stateDir;
const stages: Record<string, number> = {};
const logs = new PassThrough();
let buf = '';
logs.on('data', (b: Buffer) => {
  buf += b.toString();
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    if (/"level":(40|50|60)/.test(line) || line.includes('batch applied')) console.error(line);
    if (!line.includes('"episode committed"')) continue;
    const ms = (JSON.parse(line) as { ms: Record<string, number> }).ms;
    for (const [k, v] of Object.entries(ms)) stages[k] = (stages[k] ?? 0) + v;
  }
});
const m = await startMuninn(config, createLogger(process.env['BENCH_LOG_LEVEL'] ?? 'info', 'muninn', logs));
const token = await signDevToken({
  stateDir,
  issuer: config.auth.issuer,
  audience: config.auth.audience,
  tenant: config.kafka.groupId,
  sub: 'bench',
  scopes: ['read', 'write'],
  ttlSeconds: 7200,
});
const data = parseLocomo(
  JSON.parse(readFileSync(new URL('../../../shared/eval/locomo/locomo-dev.json', import.meta.url), 'utf8')),
);
const episodes = data.episodes.slice(0, SESSIONS);
const MUTATION = 'mutation I($input: EpisodeInput!) { ingestEpisode(input: $input) { outcome } }';

console.log(
  `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}; embedder ${config.embedder.kind}, extractor ${config.extractor.kind}`,
);
let turns = 0;
let records = 0;
const perEpisode: number[] = [];
const t0 = performance.now();
for (const ep of episodes) {
  const t = performance.now();
  const res = await fetch(m.api!.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({
      query: MUTATION,
      variables: {
        input: {
          namespace: locomoNamespace(ep.sampleId),
          source: 'import:locomo',
          occurredAt: ep.occurredAt,
          turns: ep.turns,
          purpose: 'bench',
          idempotencyKey: `${ep.sampleId}-${ep.session}`,
        },
      },
    }),
  });
  const body = (await res.json()) as {
    data?: { ingestEpisode: Array<{ outcome: string }> };
    errors?: unknown;
  };
  if (!body.data) throw new Error(JSON.stringify(body.errors));
  perEpisode.push(performance.now() - t);
  process.stderr.write(
    `\r${perEpisode.length}/${episodes.length} sessions (last ${(performance.now() - t).toFixed(0)} ms)   `,
  );
  turns += ep.turns.length;
  records += body.data.ingestEpisode.filter((r) => r.outcome !== 'REJECTED').length;
}
const seconds = (performance.now() - t0) / 1000;
const sorted = [...perEpisode].sort((a, b) => a - b);
console.log(
  `${episodes.length} sessions, ${turns} turns, ${records} statements in ${seconds.toFixed(1)} s: ${(turns / seconds).toFixed(1)} turns/s, ${(records / seconds).toFixed(1)} records/s`,
);
console.log(
  `per session (await: true): p50 ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms, p95 ${sorted[Math.floor(sorted.length * 0.95)]!.toFixed(0)} ms`,
);
const total = Object.values(stages).reduce((a, b) => a + b, 0);
console.log('where the time goes (sum over sessions):');
for (const [k, v] of Object.entries(stages).sort((a, b) => b[1] - a[1]))
  console.log(`  ${k.padEnd(8)} ${(v / 1000).toFixed(2)} s  ${((100 * v) / total).toFixed(1)}%`);
await m.stop();
process.exit(0);
