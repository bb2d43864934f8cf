// npm run bench:refusal — prints figures, asserts nothing. What an overload refusal costs the server:
// `muninn serve` in a child process with a write limit of one in flight (MUNINN_WRITE_MAX_INFLIGHT=1), so
// that nearly every `propose` of BENCH_CALLERS (16) concurrent callers is refused with RATE_LIMITED, beside
// the same callers sending `{ __typename }` (a request's floor). Each phase runs BENCH_REQUESTS (4,000)
// after a warm-up, twice, alternated; the figure is the server's CPU per request (/proc), and requests/s.
// The few writes admitted (one at a time) cost far more than a refusal and are in the figure: Neo4j's and
// Kafka's CPU in the propose phases is theirs.
// Why it matters (issue #11): at twice the sustainable rate an overloaded process refuses hundreds of
// writes a second on the event loop that also serves the admitted ones and the projection.
import { mkdtempSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from '../../src/config/index.ts';
import { ensureDevKeys, signDevToken } from '../../src/adapters/auth/dev-keys.ts';
import { freePort, spawnServe, waitReady } from '../support/processes.ts';
import { cpuShare } from './cpu-share.ts';
import { unboundedBudgetsPolicy } from './support.ts';

const REQUESTS = Number(process.env['BENCH_REQUESTS'] ?? 4000);
const CALLERS = Number(process.env['BENCH_CALLERS'] ?? 16);
const suffix = randomUUID().slice(0, 8);
const stateDir = mkdtempSync(join(tmpdir(), 'muninn-refusal-'));
// Budgets that never bind: every refusal is the overload guard's, none a write budget's.
const policyFile = unboundedBudgetsPolicy(stateDir);
const env = {
  MUNINN_ENV: 'test',
  MUNINN_STATE_DIR: stateDir,
  MUNINN_LOG_LEVEL: 'silent',
  MUNINN_LEDGER_TOPIC: `muninn.refusal.${suffix}`,
  MUNINN_DLQ_TOPIC: `muninn.refusal.${suffix}.dlq`,
  MUNINN_PROJECTOR_GROUP: `refusal-${suffix}`,
  MUNINN_POLICY_FILE: policyFile,
  MUNINN_EMBEDDER: 'hashing',
  MUNINN_WRITE_MAX_INFLIGHT: '1',
};
const config = load({ ...process.env, ...env, MUNINN_PORT: '0' });
await ensureDevKeys(stateDir);
const port = await freePort();
const server = spawnServe('all', { ...env, MUNINN_PORT: String(port) }, 'ignore');
process.on('exit', () => {
  if (server.child.exitCode === null) server.child.kill('SIGKILL');
});
const url = `http://127.0.0.1:${port}/graphql`;
await waitReady(`http://127.0.0.1:${port}`);
const token = await signDevToken({
  stateDir,
  issuer: config.auth.issuer,
  audience: config.auth.audience,
  tenant: 'refusal',
  sub: 'bench',
  scopes: ['read', 'write'],
  ttlSeconds: 3600,
});

const MUTATION = 'mutation P($input: ProposeInput!) { propose(input: $input) { outcome position } }';
let seq = 0;
const bodies = {
  typename: () => JSON.stringify({ query: '{ __typename }' }),
  propose: () => {
    const i = seq++;
    return JSON.stringify({
      query: MUTATION,
      variables: {
        input: {
          namespace: 'bench/refusal',
          class: 'FACT',
          statement: { subject: `s${i}`, predicate: 'is', object: `o${i}`, text: `Refused statement ${i}.` },
          purpose: 'bench',
          idempotencyKey: `r-${suffix}-${i}`,
          await: false,
        },
      },
    });
  },
};
type Kind = keyof typeof bodies;

/** `n` requests of one kind from CALLERS callers; how many came back RATE_LIMITED. */
async function phase(kind: Kind, n: number): Promise<{ refused: number }> {
  let sent = 0;
  let refused = 0;
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (sent++ < n) {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: bodies[kind](),
        });
        const body = (await res.json()) as { errors?: Array<{ extensions?: { code?: string } }> };
        if (body.errors?.[0]?.extensions?.code === 'RATE_LIMITED') refused++;
      }
    }),
  );
  return { refused };
}

const root = new URL('../../', import.meta.url).pathname;
console.log(
  `server: muninn serve, MUNINN_WRITE_MAX_INFLIGHT=1; ${CALLERS} callers, ${REQUESTS} requests a phase`,
);
for (const kind of ['typename', 'propose', 'typename', 'propose'] as const) {
  await phase(kind, Math.round(REQUESTS / 8)); // warm-up
  const cpu = cpuShare(root, { server: server.child.pid! });
  const t0 = performance.now();
  const { refused } = await phase(kind, REQUESTS);
  const rate = REQUESTS / ((performance.now() - t0) / 1000);
  const what = kind === 'propose' ? `propose (${refused} of ${REQUESTS} refused)` : '{ __typename }';
  console.log(`${what}: ${Math.round(rate)} requests/s`);
  console.log(`  ${cpu({ count: REQUESTS, what: 'request' })}`);
}
server.child.kill('SIGTERM');
await server.exited;
