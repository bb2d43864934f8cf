import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decidePropose,
  decideRetract,
  decideRevise,
  type DecideContext,
  ProposeCommand,
  ReviseCommand,
  RetractCommand,
} from '../../src/domain/commands.ts';
import type { LedgerEvent } from '../../src/domain/events.ts';
import { MemoryState } from '../../src/domain/memory-state.ts';
import { writerPrincipal } from '../support/principals.ts';
import { connectAdapters } from '../../src/compose.ts';
import { rebuild } from '../../src/projector/rebuild.ts';
import { silentLogger } from '../../src/ports/logger.ts';
import { caughtUp, testConfig } from '../support/harness.ts';
import { stateDiff } from '../support/state-diff.ts';

/**
 * Invariants 1 and 3 under fire: a separate `muninn projector` process is SIGKILLed at random points
 * while a 2,000-event stream arrives, 20 times, then restarted to drain. The live graph must equal a clean
 * rebuild, hold no duplicates, match a pure fold of the same log, and no checkpoint may ever move back.
 */
const ROUNDS = 20;
const EVENTS = 2000;
const suffix = randomUUID().slice(0, 8);
const env = {
  MUNINN_LEDGER_TOPIC: `muninn.test.kill.${suffix}`,
  MUNINN_DLQ_TOPIC: `muninn.test.kill.${suffix}.dlq`,
  MUNINN_PROJECTOR_GROUP: `kill-${suffix}`,
  MUNINN_PROJECTOR_SESSION_TIMEOUT_MS: '6000',
  MUNINN_PROJECTOR_BATCH_MAX: '10',
  MUNINN_LEDGER_PARTITIONS: '3',
};
const config = testConfig(env);
const { store, ledger, decode } = connectAdapters(config, silentLogger);
const root = new URL('../../', import.meta.url).pathname;

/** Deterministic PRNG (mulberry32), so a failing run can be replayed. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const seed = Number(process.env['KILL_TEST_SEED'] ?? Date.now() % 1_000_000);
const rand = prng(seed);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

/** Builds a plausible stream: proposals (some with entities), revisions (some stale), retractions and re-sent duplicates. */
function* eventStream(): Generator<LedgerEvent> {
  const tenants = Array.from({ length: 24 }, (_, i) => `kill-${suffix}-${i}`);
  const known = new Map<string, Array<{ id: string; version: number; ns: string }>>();
  const sent: LedgerEvent[] = [];
  let n = 0;
  let clock = Date.parse('2026-01-01T00:00:00Z');
  while (n < EVENTS) {
    const tenant = pick(tenants);
    const principal = writerPrincipal(tenant);
    const ctx: DecideContext = { principal, now: new Date((clock += 7)), newId: () => randomUUID() };
    const recs = known.get(tenant) ?? [];
    const r = rand();
    let out: LedgerEvent[];
    if (r < 0.08 && sent.length > 0) {
      out = [pick(sent)]; // a producer retry: the very same event again
    } else if (r < 0.55 || recs.length === 0) {
      const ns = pick(['acme', 'acme/platform', 'acme/platform/payments']);
      const cmd = ProposeCommand.parse({
        namespace: ns,
        class: pick(['FACT', 'CONSTRAINT', 'PREFERENCE'] as const),
        statement: { subject: `s${n}`, predicate: 'is', object: `o${n}`, text: `statement ${n}` },
        about: rand() < 0.4 ? [{ alias: pick(['payments-api', 'ledger', 'billing']), type: 'service' }] : [],
        purpose: 'kill-test',
        idempotencyKey: `k-${n}`,
      });
      out = decidePropose(
        ctx,
        cmd,
        cmd.about.map((ref) => ({ ref, existingId: undefined })),
        'ACTIVE',
      );
      const p = out[out.length - 1]!;
      if (p.type === 'RecordProposed') recs.push({ id: p.payload.recordId, version: 1, ns });
    } else if (r < 0.92) {
      const rec = pick(recs);
      const stale = rand() < 0.2;
      const cmd = ReviseCommand.parse({
        id: rec.id,
        expectedVersion: stale ? Math.max(1, rec.version - 1) : rec.version,
        statement: { subject: 's', predicate: 'is', object: `rev${n}`, text: `revised ${n}` },
        purpose: 'kill-test',
        idempotencyKey: `k-${n}`,
      });
      out = [decideRevise(ctx, cmd, rec.ns)];
      if (!stale) rec.version++;
    } else {
      const rec = pick(recs);
      out = [
        decideRetract(
          ctx,
          RetractCommand.parse({
            id: rec.id,
            expectedVersion: rec.version,
            reason: 'test',
            idempotencyKey: `k-${n}`,
          }),
          rec.ns,
        ),
      ];
      recs.splice(recs.indexOf(rec), 1);
    }
    known.set(tenant, recs);
    for (const e of out) {
      if (n >= EVENTS) return;
      sent.push(e);
      n++;
      yield e;
    }
  }
}

/**
 * The events as the API appends them: one append per request (consecutive events of one tenant with one
 * command hash). An append is one projector transaction at least (src/projector/chunks.ts): the whole
 * round's chunk in one append would be applied in one step, and the kills would rarely fall inside work.
 */
function requestsOf(events: readonly LedgerEvent[]): LedgerEvent[][] {
  const out: LedgerEvent[][] = [];
  for (const e of events) {
    const last = out.at(-1)?.at(-1);
    if (last && last.tenant === e.tenant && last.commandHash === e.commandHash) out.at(-1)!.push(e);
    else out.push([e]);
  }
  return out;
}

/** The pure fold of the log as it landed (per partition, in offset order): what the graph must hold. */
function expectedCounts(log: Array<{ partition: number; offset: bigint; event: LedgerEvent }>) {
  const state = new MemoryState();
  const ordered = [...log].sort((a, b) => a.partition - b.partition || (a.offset < b.offset ? -1 : 1));
  for (const { event } of ordered) state.apply(event);
  return state.counts();
}

function spawnProjector(): { child: ChildProcess; firstBatch: Promise<void>; exited: Promise<void> } {
  const child = spawn(process.execPath, ['bin/muninn', 'projector'], {
    cwd: root,
    env: {
      ...process.env,
      NEO4J_URI: config.neo4j.uri,
      KAFKA_BROKERS: config.kafka.brokers.join(','),
      MUNINN_STATE_DIR: config.stateDir,
      MUNINN_KEY_DIR: config.erasure.keyDir,
      MUNINN_LOG_LEVEL: 'debug',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let onBatch!: () => void;
  const firstBatch = new Promise<void>((r) => (onBatch = r));
  child.stderr!.on('data', (b: Buffer) => {
    if (b.toString().includes('"msg":"batch applied"')) onBatch();
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return { child, firstBatch, exited };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function countLabels(): Promise<Record<string, number>> {
  const res = await store.db.read(
    'test.counts',
    'MATCH (n) WHERE n:Record OR n:Revision OR n:Entity OR n:Receipt OR n:Episode OR n:Chunk RETURN labels(n)[0] AS l, count(*) AS c',
  );
  return Object.fromEntries(res.records.map((r) => [r.get('l') as string, Number(r.get('c'))]));
}

beforeAll(async () => {
  await store.wipe();
  await store.migrate();
  await ledger.ensureTopics();
});
afterAll(async () => {
  await ledger.close();
  await store.close();
});

describe(`projector SIGKILLed ${ROUNDS} times during a ${EVENTS}-event stream (seed ${seed})`, () => {
  it('converges to the clean rebuild: same state hash, no duplicates, checkpoints never move backwards', async () => {
    const log: Array<{ partition: number; offset: bigint; event: LedgerEvent }> = [];
    const stream = eventStream();
    const perRound = EVENTS / ROUNDS;

    // Watch every checkpoint for the whole run: it may only ever move forward.
    const seen = new Map<number, bigint>();
    const regressions: string[] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        for (const c of await store.checkpoints(env.MUNINN_LEDGER_TOPIC)) {
          const o = BigInt(c.offset);
          const prev = seen.get(c.partition) ?? -1n;
          if (o < prev) regressions.push(`partition ${c.partition}: ${prev} → ${o}`);
          seen.set(c.partition, o > prev ? o : prev);
        }
        await sleep(25);
      }
    })();

    let killedMidStream = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const p = spawnProjector();
      // The stream keeps arriving while the projector starts, works and dies.
      const chunk: LedgerEvent[] = [];
      for (let i = 0; i < perRound; i++) {
        const e = stream.next();
        if (!e.done) chunk.push(e.value);
      }
      const positions = (await Promise.all(requestsOf(chunk).map((r) => ledger.append(r)))).flat();
      chunk.forEach((event, i) =>
        log.push({ partition: positions[i]!.partition, offset: BigInt(positions[i]!.offset), event }),
      );
      if (round % 5 === 0) {
        await sleep(Math.floor(rand() * 2500)); // somewhere during start-up
      } else {
        await Promise.race([p.firstBatch, sleep(25_000)]);
        await sleep(Math.floor(rand() * 300)); // somewhere inside the work
      }
      if (!(await caughtUp(ledger, store, env.MUNINN_LEDGER_TOPIC))) killedMidStream++;
      p.child.kill('SIGKILL');
      await p.exited;
    }
    expect(log).toHaveLength(EVENTS);

    // Restart and drain.
    const last = spawnProjector();
    const deadline = Date.now() + 120_000;
    while (!(await caughtUp(ledger, store, env.MUNINN_LEDGER_TOPIC))) {
      if (Date.now() > deadline) throw new Error('the restarted projector did not catch up within 120 s');
      await sleep(200);
    }
    last.child.kill('SIGTERM');
    await last.exited;
    watching = false;
    await watcher;

    expect(regressions).toEqual([]);
    expect(killedMidStream).toBeGreaterThan(ROUNDS / 2);

    const counts = await countLabels();
    expect(counts).toEqual(expectedCounts(log));
    const dupes = await store.db.read(
      'test.dupes',
      'MATCH (n:Record) WITH n.tenant AS t, n.id AS id, count(*) AS c WHERE c > 1 RETURN count(*) AS d',
    );
    expect(Number(dupes.records[0]!.get('d'))).toBe(0);

    const live = await store.stateHash();
    // Kept to say where the states differ if they do (a CI run on 2026-12-05 saw them differ once, seed
    // 853057, which passed when run again: a timing, not the seed).
    const liveLines = (await store.stateLines()).lines;
    const rebuilt = await rebuild(ledger, store, env.MUNINN_LEDGER_TOPIC, 500, undefined, decode);
    expect(rebuilt.events).toBe(EVENTS);
    if (rebuilt.hash !== live.hash) {
      const diff = stateDiff(liveLines, (await store.stateLines()).lines);
      expect.fail(`live state hash ${live.hash} != rebuilt ${rebuilt.hash}\n${diff}`);
    }
    expect(rebuilt.hash).toBe(live.hash);
    expect(await countLabels()).toEqual(counts);
  }, 900_000);
});
