// npm run bench:rebuild — prints figures, asserts nothing. Only bench:ledger's third phase: appends
// BENCH_REBUILD_EVENTS (100k) proposals to a topic of its own and replays them into an emptied graph
// (BENCH_ALLOW_WIPE=1 when the graph holds records). BENCH_TOPIC=<a topic an earlier run printed> replays
// that topic again without appending (its state dir too: BENCH_STATE_DIR, for the sealed events' keys).
import { benchConfig } from './support.ts';
import { benchRebuild } from './rebuild-phase.ts';

const reuse = process.env['BENCH_TOPIC'];
const config = await benchConfig(
  'rebuild',
  reuse ? { MUNINN_LEDGER_TOPIC: reuse, MUNINN_STATE_DIR: process.env['BENCH_STATE_DIR'] ?? '' } : {},
);
console.log(`topic ${config.kafka.topic}, state dir ${config.stateDir}`);
const tenants = Array.from({ length: 12 }, (_, i) => `bench-${i}`);
await benchRebuild(config, Number(process.env['BENCH_REBUILD_EVENTS'] ?? 100_000), tenants);
process.exit(0);
