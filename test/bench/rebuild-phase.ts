import { randomUUID } from 'node:crypto';
import type { Config } from '../../src/config/index.ts';
import { decidePropose, ProposeCommand } from '../../src/domain/commands.ts';
import { writerPrincipal } from '../support/principals.ts';
import { connectAdapters } from '../../src/compose.ts';
import { silentLogger } from '../../src/ports/logger.ts';
import { rebuild } from '../../src/projector/rebuild.ts';
import { cpuShare, stackCpuSeconds } from './cpu-share.ts';
import { rebuildCeiling } from './rebuild-ceiling.ts';
import { offlineRebuild } from './rebuild-offline.ts';

const root = new URL('../../', import.meta.url).pathname;

/**
 * Rebuild speed (issue #11): tops the config's topic up to `events` proposals (appended straight through
 * the ledger port, sealed as the API seals them, spread over `tenants`), then replays it into an emptied
 * graph and prints the rate, the cores each process used during the replay, and where the graph's time
 * went (each statement kind's wall time; what is left of a transaction's time is mostly its commit).
 * It EMPTIES the graph: it runs only when the graph holds no records or BENCH_ALLOW_WIPE=1.
 * BENCH_CEILING=<rows> (e.g. 20000) then prints what Neo4j accepts for the same rows (rebuild-ceiling.ts);
 * BENCH_OFFLINE=1 what an offline import of the same topic would take (rebuild-offline.ts).
 */
export async function benchRebuild(
  config: Config,
  events: number,
  tenants: readonly string[],
): Promise<void> {
  const a = connectAdapters(config, silentLogger);
  try {
    await a.ledger.ensureTopics();
    const existing = await a.store.db.read('bench.count', 'MATCH (n:Record) RETURN count(n) AS c');
    const records = Number(existing.records[0]?.get('c') ?? 0);
    if (records > 0 && process.env['BENCH_ALLOW_WIPE'] !== '1') {
      console.log(
        `rebuild: skipped — the graph holds ${records} records; rerun with BENCH_ALLOW_WIPE=1 to let the benchmark empty it`,
      );
      return;
    }
    const have = (await a.ledger.offsets()).reduce((s, o) => s + Number(o.highWatermark), 0);
    const t0 = performance.now();
    for (let i = have; i < events; i += 1000) {
      const batch = [];
      for (let j = i; j < Math.min(events, i + 1000); j++)
        batch.push(...proposal(tenants[j % tenants.length]!, j));
      await a.ledger.append(batch);
    }
    const appendS = (performance.now() - t0) / 1000;
    console.log(`appended ${events - have} events directly to the ledger in ${appendS.toFixed(1)} s`);
    const byOp = new Map<string, { n: number; ms: number }>();
    a.store.db.observer = (r) => {
      const o = byOp.get(r.op) ?? { n: 0, ms: 0 };
      o.n++;
      o.ms += r.ms;
      byOp.set(r.op, o);
    };
    const cpu = cpuShare(root);
    const r = await rebuild(
      a.ledger,
      a.store,
      config.kafka.topic,
      config.kafka.rebuildBatchMax,
      undefined,
      a.decode,
    );
    const cores = cpu();
    a.store.db.observer = undefined;
    console.log(
      `rebuild: ${r.events} events in ${r.seconds.toFixed(1)} s = ${Math.round(r.eventsPerSecond)} events/s (${r.nodes} nodes, ${r.relationships} relationships); state-hash ${r.hash.slice(0, 16)}…`,
    );
    console.log(`  during the replay (wipe, migrations and the state hash included), ${cores}`);
    console.log('  statements by op (wall s as the replay saw them, top 6):');
    for (const [op, o] of [...byOp].sort((x, y) => y[1].ms - x[1].ms).slice(0, 6))
      console.log(`    ${op.padEnd(28)} ${String(o.n).padStart(5)} × ${(o.ms / 1000).toFixed(2)} s`);
    const ceiling = Number(process.env['BENCH_CEILING'] ?? 0);
    if (ceiling > 0) {
      const sample = Array.from({ length: ceiling }, (_, j) =>
        proposal(tenants[j % tenants.length]!, j),
      ).flat();
      await rebuildCeiling(a.store.db, sample, config.kafka.rebuildBatchMax, stackCpuSeconds(root, 'neo4j'));
    }
    if (process.env['BENCH_OFFLINE'] === '1') await offlineRebuild(a.ledger, a.decode, r);
  } finally {
    await a.ledger.close();
    await a.store.close();
  }
}

function proposal(tenant: string, j: number) {
  const cmd = ProposeCommand.parse({
    namespace: 'bench/rebuild',
    class: 'FACT',
    purpose: 'bench',
    statement: { subject: `s${j}`, predicate: 'is', object: `o${j}`, text: `Rebuild statement ${j}.` },
    idempotencyKey: `r-${j}`,
  });
  return decidePropose(
    { principal: writerPrincipal(tenant, 'bench', 'bench'), now: new Date(), newId: randomUUID },
    cmd,
    [],
    'ACTIVE',
  );
}
