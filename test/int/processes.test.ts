import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDevKeys, signDevToken } from '../../src/adapters/auth/dev-keys.ts';
import { connectAdapters } from '../../src/compose.ts';
import { rebuild } from '../../src/projector/rebuild.ts';
import { silentLogger } from '../../src/ports/logger.ts';
import { freePort, spawnServe, waitReady } from '../support/processes.ts';
import { caughtUp, gql, PROPOSE, proposal, REVISE, testConfig, type GqlResult } from '../support/harness.ts';

/**
 * Issue #15's topology on the local stack: 2 API processes and 2 projector processes (`muninn serve
 * --role …`) on a 4-partition topic. Writes go to both APIs while one projector is SIGKILLed mid-stream;
 * the other must take over its partitions. Every acknowledged write must be projected exactly once, and
 * the live graph must hash equal to a clean rebuild of the topic. First, the same topology decides writes
 * about one subject one at a time across its APIs (the graph's subject turns): with MUNINN_SUBJECT_TURNS=process
 * that case came back ADMITTED twice or more.
 */
const WRITES = Number(process.env['PROCESSES_TEST_WRITES'] ?? 240);
const TENANTS = 16;
const suffix = randomUUID().slice(0, 8);
const env = {
  MUNINN_LEDGER_TOPIC: `muninn.test.procs.${suffix}`,
  MUNINN_DLQ_TOPIC: `muninn.test.procs.${suffix}.dlq`,
  MUNINN_PROJECTOR_GROUP: `procs-${suffix}`,
  MUNINN_PROJECTOR_SESSION_TIMEOUT_MS: '6000',
  MUNINN_PROJECTOR_BATCH_MAX: '10',
  MUNINN_LEDGER_PARTITIONS: '4',
  MUNINN_EMBEDDER: 'hashing',
  MUNINN_WRITE_MAX_LAG_MS: '60000',
};
const config = testConfig(env);
const { store, ledger, decode } = connectAdapters(config, silentLogger);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Each process's log, kept for a failure's diagnosis (PROCESSES_TEST_LOGS to choose the directory). */
const LOGS = process.env['PROCESSES_TEST_LOGS'] ?? mkdtempSync(join(tmpdir(), 'muninn-procs-logs-'));

interface Proc {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  /** Resolves once the process has logged an applied batch (projectors) or started (APIs). */
  readonly busy: Promise<void>;
  /** Each applied batch's partition and when this test saw it. */
  readonly batches: Array<{ partition: number; at: number }>;
}

/** One `muninn serve --role <role>` with its own state dir holding the shared dev signing keys. */
function spawnRole(role: 'api' | 'projector', keysFrom: string, port: number): Proc {
  const stateDir = mkdtempSync(join(tmpdir(), `muninn-procs-${role}-`));
  cpSync(join(keysFrom, 'dev-keys'), join(stateDir, 'dev-keys'), { recursive: true });
  const { child, exited } = spawnServe(role, {
    NEO4J_URI: config.neo4j.uri,
    KAFKA_BROKERS: config.kafka.brokers.join(','),
    MUNINN_STATE_DIR: stateDir,
    MUNINN_KEY_DIR: config.erasure.keyDir,
    MUNINN_PORT: String(port),
    MUNINN_HOST: '127.0.0.1',
    MUNINN_LOG_LEVEL: 'debug',
    MUNINN_AWAIT_TIMEOUT_MS: '60000',
    ...env,
  });
  let onBusy!: () => void;
  const busy = new Promise<void>((r) => (onBusy = r));
  const proc: Proc = { child, exited: exited.then(() => undefined), busy, batches: [] };
  child.stderr!.pipe(createWriteStream(join(LOGS, `${role}-${port}.log`)));
  child.stderr!.on('data', (b: Buffer) => {
    const text = b.toString();
    if (text.includes('"msg":"muninn started"') && role === 'api') onBusy();
    for (const line of text.split('\n')) {
      const m = /"partition":(\d+).*"msg":"batch applied"/.exec(line);
      if (!m) continue;
      proc.batches.push({ partition: Number(m[1]), at: Date.now() });
      onBusy();
    }
  });
  return proc;
}

/**
 * A well-behaved client: a retryable refusal (`extensions.retryable`) or a dropped connection is retried
 * with the same idempotency key, so it can never become a second write. Anything else is returned.
 */
async function send<T>(url: string, token: string, query: string, input: object): Promise<GqlResult<T>> {
  for (let attempt = 0; ; attempt++) {
    const res = await gql<T>(`${url}/graphql`, token, query, { input }).catch(() => null);
    const refusal = res?.errors?.find((e) => e.extensions?.['retryable'] === true);
    if ((res !== null && !refusal) || attempt >= 200)
      return res ?? { status: 0, data: null, errors: [{ message: 'no answer' }] };
    await sleep(Math.min(Number(refusal?.extensions?.['retryAfterMs'] ?? 250), 2000));
  }
}

const procs: Proc[] = [];
beforeAll(async () => {
  await store.wipe();
  await store.migrate();
  await ledger.ensureTopics();
});
afterAll(async () => {
  for (const p of procs) p.child.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
  await ledger.close();
  await store.close();
});

/** What the graph holds for these records now: the node (any status) and the receipts that name them. */
async function graphFacts(ids: readonly string[]): Promise<string> {
  const res = await store.db.read(
    'test.procs.facts',
    `UNWIND $ids AS id OPTIONAL MATCH (n:Record {id: id}) OPTIONAL MATCH (c:Receipt {recordId: id})
     RETURN id, n.status AS status, n.version AS version, collect(c.outcome) AS receipts`,
    { ids },
  );
  const cps = await store.checkpoints(env.MUNINN_LEDGER_TOPIC);
  return JSON.stringify({ records: res.records.map((r) => r.toObject()), checkpoints: cps });
}

/**
 * Why acknowledged records are not in the graph, for a failure that shows once in dozens of runs: where
 * their events are on the ledger, what the graph holds for them, and what the processes logged at warn
 * or above (or about dead letters). Read only when the check fails.
 */
async function diagnosis(missing: readonly string[]): Promise<string> {
  const want = new Set(missing);
  const onLedger: string[] = [];
  await ledger.readAll(async (batch) => {
    for (const m of batch.messages) {
      const d = m.value ? await decode(m.value) : null;
      if (d?.ok && 'recordId' in d.event.payload && want.has(String(d.event.payload.recordId)))
        onLedger.push(`${d.event.type} ${d.event.payload.recordId} at ${m.partition}:${m.offset}`);
    }
  }, 500);
  const logged = readdirSync(LOGS).flatMap((f) =>
    readFileSync(join(LOGS, f), 'utf8')
      .split('\n')
      .filter((l) => /"level":[456]0|dead-letter/.test(l))
      .map((l) => `${f}: ${l.slice(0, 300)}`),
  );
  return [
    `ledger: ${onLedger.join('; ') || 'none'}`,
    `graph: ${await graphFacts(missing)}`,
    `logs (${LOGS}):`,
    ...logged.slice(-40),
  ].join('\n');
}

describe('2 API and 2 projector processes on a 4-partition topic', () => {
  it('six proposals of one statement sent at once through both API processes make one record, the rest reinforce it', async () => {
    const keys = mkdtempSync(join(tmpdir(), 'muninn-procs-keys-'));
    await ensureDevKeys(keys);
    const ports = await Promise.all([freePort(), freePort(), freePort()]);
    const own = [0, 1].map((i) => spawnRole('api', keys, ports[i]!));
    own.push(spawnRole('projector', keys, ports[2]!));
    procs.push(...own);
    const urls = ports.slice(0, 2).map((p) => `http://127.0.0.1:${p}`);
    await Promise.all(urls.map((u) => waitReady(u)));
    const token = await signDevToken({
      stateDir: keys,
      issuer: config.auth.issuer,
      audience: config.auth.audience,
      tenant: `procs-${suffix}-one-subject`,
      sub: 'writer',
      scopes: ['read', 'write'],
      ttlSeconds: 900,
    });
    const subject = `billing-api-${suffix}`;
    const statement = { subject, predicate: 'uses', object: 'redis', text: `The ${subject} uses redis.` };
    const answers = await Promise.all(
      [0, 1, 2, 3, 4, 5].map((i) =>
        send<{ propose: { outcome: string; recordId: string } }>(urls[i % 2]!, token, PROPOSE, {
          ...proposal({ namespace: 'acme/platform', statement }),
          await: true,
        }),
      ),
    );
    const receipts = answers.map(
      (a) => a.data?.propose ?? { outcome: JSON.stringify(a.errors), recordId: '' },
    );
    expect(receipts.map((r) => r.outcome).sort()).toEqual(['ADMITTED', ...Array(5).fill('REINFORCED')]);
    expect(new Set(receipts.map((r) => r.recordId)).size).toBe(1);
    for (const p of own) p.child.kill('SIGTERM');
    await Promise.all(own.map((p) => p.exited));
  }, 300_000);

  it('one projector SIGKILLed mid-stream: the other takes over, every acknowledged write projected once, live = rebuild', async () => {
    const keys = mkdtempSync(join(tmpdir(), 'muninn-procs-keys-'));
    await ensureDevKeys(keys);
    const ports = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const apis = [spawnRole('api', keys, ports[0]!), spawnRole('api', keys, ports[1]!)];
    const projectors = [spawnRole('projector', keys, ports[2]!), spawnRole('projector', keys, ports[3]!)];
    procs.push(...apis, ...projectors);
    const urls = ports.slice(0, 2).map((p) => `http://127.0.0.1:${p}`);
    await Promise.all(urls.map((u) => waitReady(u)));

    const tenants = Array.from({ length: TENANTS }, (_, i) => `procs-${suffix}-${i}`);
    const tokens = await Promise.all(
      tenants.map((tenant) =>
        signDevToken({
          stateDir: keys,
          issuer: config.auth.issuer,
          audience: config.auth.audience,
          tenant,
          sub: 'writer',
          scopes: ['read', 'write'],
          ttlSeconds: 900,
        }),
      ),
    );

    // Closed loop, 8 callers alternating the two APIs: proposals, and a revision of every fifth record.
    const acked = new Map<string, { tenant: string; version: number }>();
    const failures: string[] = [];
    let next = 0;
    let killedAt = 0;
    const caller = async (c: number) => {
      for (let i = next++; i < WRITES; i = next++) {
        const t = i % TENANTS;
        const url = urls[(i + c) % 2]!;
        const p = await send<{ propose: { recordId: string; outcome: string; position: string } }>(
          url,
          tokens[t]!,
          PROPOSE,
          {
            ...proposal({ namespace: 'acme/platform' }),
            // A record about to be revised is awaited (a revision needs it projected); the rest are not.
            await: i % 5 === 0,
          },
        );
        if (!p.data?.propose) {
          failures.push(JSON.stringify(p.errors));
          continue;
        }
        acked.set(p.data.propose.recordId, { tenant: tenants[t]!, version: 1 });
        if (i % 5 === 0) {
          const r = await send<{ revise: { outcome: string } }>(url, tokens[t]!, REVISE, {
            id: p.data.propose.recordId,
            expectedVersion: 1,
            statement: { subject: `rev-${i}`, predicate: 'is', object: 'revised', text: `Revised ${i}.` },
            purpose: 'test',
            idempotencyKey: `rev-${suffix}-${i}`,
            await: true,
          });
          if (r.data?.revise) acked.set(p.data.propose.recordId, { tenant: tenants[t]!, version: 2 });
          else
            failures.push(
              `${JSON.stringify(r.errors)} after ${JSON.stringify(p.data.propose)}: ${await graphFacts([p.data.propose.recordId])}`,
            );
        }
        if (!killedAt && i >= WRITES / 2 && projectors[0]!.batches.length > 0) {
          killedAt = Date.now();
          projectors[0]!.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, c) => caller(c)));
    expect(failures).toEqual([]);
    expect(killedAt).toBeGreaterThan(0);
    await projectors[0]!.exited;

    // The survivor alone drains all four partitions.
    const deadline = Date.now() + 120_000;
    while (!(await caughtUp(ledger, store, env.MUNINN_LEDGER_TOPIC))) {
      if (Date.now() > deadline) throw new Error('the surviving projector did not catch up within 120 s');
      await sleep(250);
    }
    expect(projectors[1]!.child.exitCode).toBeNull();
    // Writes went on for every tenant after the kill, so each partition the victim had got more events:
    // the survivor applied them.
    const victims = new Set(projectors[0]!.batches.map((b) => b.partition));
    const takenOver = new Set(projectors[1]!.batches.filter((b) => b.at > killedAt).map((b) => b.partition));
    expect(victims.size).toBeGreaterThan(0);
    expect([...victims].filter((p) => !takenOver.has(p))).toEqual([]);
    expect((await ledger.offsets()).map((o) => o.partition).sort()).toEqual([0, 1, 2, 3]);

    // Every acknowledged write is in the graph, at its acknowledged version, exactly once.
    const rows = await store.db.read(
      'test.procs.records',
      'MATCH (n:Record) WHERE n.tenant IN $tenants RETURN n.id AS id, n.version AS v, count(*) AS c',
      { tenants },
    );
    const seen = new Map(rows.records.map((r) => [String(r.get('id')), Number(r.get('v'))]));
    expect(rows.records.filter((r) => Number(r.get('c')) > 1)).toEqual([]);
    const missing = [...acked.keys()].filter((id) => !seen.has(id));
    if (missing.length > 0) expect(missing, await diagnosis(missing)).toEqual([]);
    expect(seen.size).toBe(acked.size);
    for (const [id, a] of acked) expect(seen.get(id), id).toBe(a.version);

    for (const p of [...apis, projectors[1]!]) p.child.kill('SIGTERM');
    await Promise.all([...apis, projectors[1]!].map((p) => p.exited));
    const live = await store.stateHash();
    const rebuilt = await rebuild(ledger, store, env.MUNINN_LEDGER_TOPIC, 500, undefined, decode);
    expect(rebuilt.hash).toBe(live.hash);
    if (!process.env['PROCESSES_TEST_LOGS']) rmSync(LOGS, { recursive: true, force: true });
  }, 600_000);
});
