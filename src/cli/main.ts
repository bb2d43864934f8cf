import { parseArgs } from 'node:util';
import { load, ConfigError, type Config } from '../config/index.ts';
import { auditKey, connectAdapters } from '../compose.ts';
import { runUntilSignal } from '../main.ts';
import { verifyAuditDir } from '../adapters/audit/file-audit-log.ts';
import { systemClock } from '../ports/clock.ts';
import { containsSecret } from '../ingest/screen.ts';
import { exportOnce, oldestUnpublishedAge } from '../handoff/exporter.ts';
import { fileSessionSource } from '../handoff/file-source.ts';
import { httpSessionSource } from '../handoff/http-source.ts';
import { fileObservationStore } from '../handoff/observation-file.ts';
import { createLogger } from '../adapters/logger.ts';
import { nodeTextFiles } from '../adapters/files/text-files.ts';
import { nodeOutboxStore } from '../adapters/files/outbox-dir.ts';
import { parseTtl, signDevToken } from '../adapters/auth/dev-keys.ts';
import { rebuild } from '../projector/rebuild.ts';
import { isMuninnError } from '../domain/errors.ts';
import { projectCmd } from './project.ts';
import { mcpCmd } from './mcp.ts';
import { curateCmd, handoffCmd } from './handoff.ts';
import { evalCmd } from './eval.ts';

const USAGE = `muninn <command> [options]

Commands:
  serve [--role all|api|projector]
                            run the API and the projector, or one of them (default MUNINN_ROLE, all)
  projector                 run the projector alone (can be scaled and killed on its own)
  token --tenant T --sub S --scopes read,write [--ttl 1h] [--audience A] [--act-sub X]
                            print a development token signed by the local dev key (--ttl at most
                            MUNINN_MAX_TOKEN_TTL_S, default 24h)
  mcp [--transport stdio|http]
                            the MCP bridge: stdio (default; MUNINN_TOKEN, the user's own token) or streamable
                            HTTP on MUNINN_MCP_PORT (an OAuth protected resource; MUNINN_MCP_* settings)
  project agents-md --namespace NS [--profile codex|claude-code|cursor|system-prompt] [--file F]
                    [--query Q] [--check] [--force]
                            write the approved team rules of NS (and its ancestors) into the fenced Muninn
                            block of F (default: the profile's file), with your own MUNINN_TOKEN; a second
                            run changes nothing; --check exits 1 when the file would change
  audit verify [--dir D]     verify every audit trail file in D (default MUNINN_AUDIT_DIR): the chain and each
                            entry's MAC; exits 1 naming the first file and line that does not verify
  rebuild                   replay the ledger into an emptied graph; print the state hash
  state-hash                print the live canonical state hash
  migrate                   apply Cypher migrations and create the ledger topics
  outbox export             one exporter run: qualify allowlisted sessions, publish minimized windows
                            (MUNINN_EXPORT_*, MUNINN_PSEUDONYM_KEY, MUNINN_OUTBOX_DIR); prints counts only
  eval [--set FILE ...] [--recipes hybrid,bm25,vector] [--seed] [--runs DIR] [--tenant T] [--k N]
                            golden-set recall evaluation (default sets: test/fixtures/golden); every run is
                            persisted with its per-query breakdown and compared with the previous one
  eval --locomo FILE [--namespace NS] [--conversations ID,...] [--recipes ...] [--tenant T] [--k N]
                            import LoCoMo-format conversations (one episode per session, written to
                            NS/<sample_id>, default NS locomo) and score their questions: recall_any@k,
                            recall_all@k, MRR per category and recipe, next to a BM25 + embedder baseline
                            (needs muninn serve running: it waits for the projection)
  mark-test-database [--unmark]
                            mark (or unmark) the connected Neo4j database as a test database (eval --seed
                            refuses any other)
  handoff serve             the Heimdall handoff contract alone, on its private port (MUNINN_HANDOFF_HOST,
                            MUNINN_HANDOFF_PORT; /handoff, /healthz, /readyz): Neo4j and the outbox only
  curate [--max N]          a client of /handoff (MUNINN_HANDOFF_URL, MUNINN_HANDOFF_TOKEN_COMMAND) and of the
                            API (MUNINN_GRAPHQL_URL, MUNINN_CURATOR_TOKEN): the next manifests' windows become
                            CANDIDATE drafts, then the handoff checkpoint is committed
`;

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case undefined:
    case 'serve':
      await runUntilSignal(serveConfig(rest));
      return 0;
    case 'projector':
      await runUntilSignal({ ...config(), role: 'projector' });
      return 0;
    case 'token':
      return token(rest);
    case 'mcp':
      return mcpCmd(rest, clientConfig());
    case 'project':
      return projectCmd(rest, clientConfig());
    case 'rebuild':
      return rebuildCmd();
    case 'state-hash':
      return stateHash();
    case 'migrate':
      return migrate();
    case 'outbox':
      if (rest[0] !== 'export') {
        process.stderr.write(`unknown outbox command ${rest[0] ?? ''}\n\n${USAGE}`);
        return 2;
      }
      return outboxExport();
    case 'handoff':
      // The handoff process needs Neo4j and the outbox, not Kafka.
      return handoffCmd(rest, load({ KAFKA_BROKERS: 'unused:0', ...process.env }));
    case 'curate':
      return curateCmd(rest, clientConfig());
    case 'audit':
      if (rest[0] !== 'verify') {
        process.stderr.write(`unknown audit command ${rest[0] ?? ''}\n\n${USAGE}`);
        return 2;
      }
      return auditVerify(rest.slice(1));
    case 'eval':
      return evalCmd(rest, config());
    case 'mark-test-database':
      return withAdapters(async ({ store }) => {
        const unmark = rest.includes('--unmark');
        await store.markTestDatabase(!unmark);
        process.stdout.write(unmark ? 'unmarked\n' : 'marked as a test database\n');
        return 0;
      });
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return 0;
    default:
      process.stderr.write(`unknown command ${cmd}\n\n${USAGE}`);
      return 2;
  }
}

function config(): Config {
  return load();
}

async function auditVerify(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { dir: { type: 'string' } } });
  const c = clientConfig();
  const dir = values.dir ?? c.audit.dir;
  const results = await verifyAuditDir(dir, await auditKey(c));
  let bad = 0;
  for (const { file, verdict, inFlight } of results) {
    const more = inFlight ? ' (and an append still being written, not verified)' : '';
    if (verdict.ok) process.stdout.write(`ok    ${file}: ${verdict.entries} entries${more}\n`);
    else {
      bad++;
      process.stdout.write(`FAIL  ${file}: line ${verdict.line}: ${verdict.reason}\n`);
    }
  }
  process.stdout.write(`${results.length} files, ${bad} failed (${dir})\n`);
  return bad === 0 ? 0 : 1;
}

/** `serve [--role all|api|projector]`: the flag overrides MUNINN_ROLE, checked by the one config loader. */
function serveConfig(args: string[]): Config {
  const { values } = parseArgs({ args, options: { role: { type: 'string' } } });
  return values.role === undefined ? config() : load({ ...process.env, MUNINN_ROLE: values.role });
}

/** Commands that are clients of the API (token, mcp, project) need no Neo4j or Kafka settings. */
function clientConfig(): Config {
  return load({ NEO4J_URI: 'bolt://unused', KAFKA_BROKERS: 'unused:0', ...process.env });
}

async function token(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      tenant: { type: 'string' },
      sub: { type: 'string' },
      scopes: { type: 'string', default: 'read,write' },
      ttl: { type: 'string', default: '1h' },
      audience: { type: 'string' },
      'act-sub': { type: 'string' },
    },
  });
  if (!values.tenant || !values.sub) {
    process.stderr.write('token needs --tenant and --sub\n');
    return 2;
  }
  // Tokens only need the auth settings; the servers need not be configured.
  const c = clientConfig();
  const ttlSeconds = parseTtl(values.ttl);
  // The API refuses longer-lived tokens (MUNINN_MAX_TOKEN_TTL_S): do not print one it would refuse.
  if (ttlSeconds > c.auth.maxTokenTtlS) {
    process.stderr.write(
      `--ttl ${values.ttl} exceeds the maximum token lifetime of ${c.auth.maxTokenTtlS} s (MUNINN_MAX_TOKEN_TTL_S)\n`,
    );
    return 2;
  }
  const jwt = await signDevToken({
    stateDir: c.stateDir,
    issuer: c.auth.issuer,
    audience: values.audience ?? c.auth.audience,
    tenant: values.tenant,
    sub: values.sub,
    scopes: values.scopes
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    ttlSeconds,
    tenantClaim: c.auth.tenantClaim,
    ...(values['act-sub'] ? { act: { sub: values['act-sub'] } } : {}),
  });
  process.stdout.write(`${jwt}\n`);
  return 0;
}

async function withAdapters<T>(
  fn: (a: ReturnType<typeof connectAdapters>, c: Config) => Promise<T>,
): Promise<T> {
  const c = config();
  const a = connectAdapters(c, createLogger(c.log.level === 'info' ? 'warn' : c.log.level));
  try {
    return await fn(a, c);
  } finally {
    await a.ledger.close();
    await a.store.close();
  }
}

function rebuildCmd(): Promise<number> {
  return withAdapters(async ({ store, ledger, decode }, c) => {
    await ledger.ensureTopics();
    const tty = process.stderr.isTTY;
    let last = 0;
    const progress = (n: number) => {
      const now = Date.now();
      if (now - last > 500) {
        last = now;
        process.stderr.write(tty ? `\rreplayed ${n} events…` : `replayed ${n} events\n`);
      }
    };
    const report = await rebuild(ledger, store, c.kafka.topic, c.kafka.rebuildBatchMax, progress, decode);
    if (tty) process.stderr.write('\n');
    process.stdout.write(
      `events=${report.events} seconds=${report.seconds.toFixed(2)} events_per_s=${Math.round(report.eventsPerSecond)} nodes=${report.nodes} relationships=${report.relationships}\nstate-hash ${report.hash}\n`,
    );
    return 0;
  });
}

function stateHash(): Promise<number> {
  return withAdapters(async ({ store }) => {
    const h = await store.stateHash();
    process.stdout.write(`state-hash ${h.hash}\nnodes=${h.nodes} relationships=${h.relationships}\n`);
    return 0;
  });
}

function migrate(): Promise<number> {
  return withAdapters(async ({ store, ledger }) => {
    const { applied } = await store.migrate();
    await ledger.ensureTopics();
    process.stdout.write(
      `migrations applied: ${applied.length ? applied.join(', ') : 'none (up to date)'}\n`,
    );
    return 0;
  });
}

async function outboxExport(): Promise<number> {
  const c = config();
  const h = c.handoff;
  if (!h.pseudonymKey || !h.source) {
    process.stderr.write('outbox export needs MUNINN_PSEUDONYM_KEY and MUNINN_EXPORT_SOURCE\n');
    return 2;
  }
  const source =
    h.source.kind === 'file'
      ? fileSessionSource(h.source.dir, nodeTextFiles)
      : httpSessionSource({ baseUrl: h.source.url, ...(h.source.token ? { token: h.source.token } : {}) });
  const store = fileObservationStore(h.stateFile, nodeTextFiles);
  const outcome = await exportOnce(
    {
      source,
      store,
      outbox: nodeOutboxStore(h.outboxDir),
      clock: systemClock,
      detectSecret: containsSecret,
      key: { keyId: h.pseudonymKey.keyId, secret: new TextEncoder().encode(h.pseudonymKey.secret) },
    },
    {
      allowlist: h.allowlist,
      quietPeriodMs: h.quietPeriodMs,
      selectedWebUiSessions: h.selectedWebUiSessions,
    },
  );
  // Operations metadata only: counts, reason codes, sequence numbers and object ids.
  process.stdout.write(
    `${JSON.stringify({ ...outcome, oldestUnpublishedAgeMs: oldestUnpublishedAge(await store.load(), Date.now()) })}\n`,
  );
  return outcome.failed > 0 ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof ConfigError) process.stderr.write(`${e.message}\n`);
    else if (isMuninnError(e)) process.stderr.write(`${e.code}: ${e.message}\n`);
    else process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(e instanceof ConfigError ? 2 : 1);
  },
);
