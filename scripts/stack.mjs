#!/usr/bin/env node
// Local server stack: Neo4j 5.26 Community (embedded DBMS + Bolt) and Kafka 3.9 (KRaft, combined
// broker+controller), run from Maven Central jars with the JDK on this machine. No npm dependencies.
//
// CLI:    node scripts/stack.mjs install|up|down|status|reset
// Module: import { ensureStack, stopStack, stackStatus, restartService } from './scripts/stack.mjs'
//
// Layout (all under the git-ignored <repo>/.stack/):
//   lib/{neo4j,kafka,launcher}/  jars copied by stack/pom.xml + compiled stack/Neo4jLauncher.java
//   lib/.installed               install stamp (hash of pom.xml + launcher source)
//   data/neo4j/                  Neo4j home (databases, transactions)
//   data/kafka/                  Kafka log.dirs;  data/kafka-cluster-id
//   run/{neo4j,kafka}.pid        pids of the JVMs this script started;  run/kafka.properties
//   logs/{neo4j,kafka}.log       JVM stdout/stderr;  logs/neo4j/debug.log
//
// Env: STACK_NEO4J_BOLT_PORT (7687), STACK_KAFKA_PORT (9092), STACK_KAFKA_CONTROLLER_PORT (9093),
//      STACK_NEO4J_HEAP (1g), STACK_NEO4J_PAGECACHE_MB (512), STACK_KAFKA_HEAP (512m),
//      STACK_START_TIMEOUT_S (120), JAVA_HOME (else `java` from PATH).

import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const STAMP_SCHEMA = 1; // bump to force a reinstall when the install layout changes

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const STACK = path.join(ROOT, '.stack');
const LIB = path.join(STACK, 'lib');
const DATA = path.join(STACK, 'data');
const RUN = path.join(STACK, 'run');
const LOGS = path.join(STACK, 'logs');
const DEBUG_LOG = path.join(LOGS, 'neo4j', 'debug.log');
const POM = path.join(ROOT, 'stack', 'pom.xml');
const LAUNCHER_SRC = path.join(ROOT, 'stack', 'Neo4jLauncher.java');
const KAFKA_TEMPLATE = path.join(ROOT, 'streams', 'kafka', 'server.properties');
const MARKER = path.join(LIB, '.installed');
const HOST = '127.0.0.1';

const env = (name, dflt) => {
  const v = process.env[name];
  return v === undefined || v.trim() === '' ? dflt : v.trim();
};
const intEnv = (name, dflt) => {
  const n = Number.parseInt(env(name, String(dflt)), 10);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer`);
  return n;
};

function config() {
  return {
    neo4jPort: intEnv('STACK_NEO4J_BOLT_PORT', 7687),
    kafkaPort: intEnv('STACK_KAFKA_PORT', 9092),
    kafkaControllerPort: intEnv('STACK_KAFKA_CONTROLLER_PORT', 9093),
    neo4jHeap: env('STACK_NEO4J_HEAP', '1g'),
    kafkaHeap: env('STACK_KAFKA_HEAP', '512m'),
    timeoutMs: intEnv('STACK_START_TIMEOUT_S', 120) * 1000,
  };
}

const javaHome = () => env('JAVA_HOME', '');
/** A JDK tool: JAVA_HOME's, else the one on PATH. */
export const javaBin = (tool) => (javaHome() ? path.join(javaHome(), 'bin', tool) : tool);
/** The classpath of Neo4j's jars (the server's, and neo4j-admin's AdminTool). */
export const NEO4J_JARS = path.join(LIB, 'neo4j', '*');
const rel = (p) => path.relative(process.cwd(), p) || '.';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const defaultLog = (msg) => process.stderr.write(`[stack] ${msg}\n`);
const mkLog = (log) => (log === false ? () => {} : typeof log === 'function' ? log : defaultLog);

// ---------------------------------------------------------------------------------------------
// install
// ---------------------------------------------------------------------------------------------

function pomVersions() {
  const pom = fs.readFileSync(POM, 'utf8');
  const prop = (n) => (pom.match(new RegExp(`<${n}>([^<]+)</${n}>`)) || [])[1];
  return { neo4j: prop('neo4j.version'), kafka: prop('kafka.version') };
}

function installStamp() {
  const h = crypto.createHash('sha256');
  h.update(`schema ${STAMP_SCHEMA}\n`);
  h.update(fs.readFileSync(POM));
  h.update(fs.readFileSync(LAUNCHER_SRC));
  return h.digest('hex').slice(0, 16);
}

function installState() {
  const stamp = installStamp();
  let marker = null;
  try {
    marker = JSON.parse(fs.readFileSync(MARKER, 'utf8'));
  } catch {}
  const v = pomVersions();
  const complete =
    fs.existsSync(path.join(LIB, 'neo4j', `neo4j-bolt-${v.neo4j}.jar`)) &&
    fs.existsSync(path.join(LIB, 'kafka', `kafka_2.13-${v.kafka}.jar`)) &&
    fs.existsSync(path.join(LIB, 'launcher', 'Neo4jLauncher.class'));
  return { stamp, marker, versions: v, ok: complete && marker?.stamp === stamp };
}

function run(cmd, args, what) {
  // Output is captured (mvn -q still emits ANSI resets) and shown only when the step fails.
  const r = spawnSync(cmd, args, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (r.error) {
    throw new Error(
      `${what}: cannot run ${cmd}: ${r.error.message}` +
        (r.error.code === 'ENOENT' ? ` (is it installed and on PATH?)` : ''),
    );
  }
  if (r.status !== 0) {
    const out = `${r.stdout}\n${r.stderr}`.replace(/\x1b\[[0-9;]*m/g, '').trim();
    throw new Error(`${what} failed: ${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}\n${out}`);
  }
}

/** Copies the jars and compiles the launcher unless .stack/lib is complete and current. */
export async function install({ log, force = false } = {}) {
  log = mkLog(log);
  const st = installState();
  if (st.ok && !force) return { installed: false, versions: st.versions };
  const t0 = Date.now();
  log(
    `installing Neo4j ${st.versions.neo4j} + Kafka ${st.versions.kafka} jars into ${rel(LIB)} (Maven, ~/.m2) ...`,
  );
  fs.rmSync(MARKER, { force: true });
  for (const d of ['neo4j', 'kafka', 'launcher'])
    fs.rmSync(path.join(LIB, d), { recursive: true, force: true });
  fs.mkdirSync(LIB, { recursive: true });
  for (const profile of ['neo4j', 'kafka']) {
    run(
      'mvn',
      [
        '-q',
        '-B',
        '-Dstyle.color=never',
        '-f',
        POM,
        `-P${profile}`,
        `-Dstack.lib.dir=${LIB}`,
        'dependency:copy-dependencies',
      ],
      `maven copy-dependencies (${profile})`,
    );
  }
  run(
    javaBin('javac'),
    ['-nowarn', '-d', path.join(LIB, 'launcher'), '-cp', NEO4J_JARS, LAUNCHER_SRC],
    'javac Neo4jLauncher',
  );
  fs.writeFileSync(
    MARKER,
    JSON.stringify({ stamp: st.stamp, ...st.versions, installedAt: new Date().toISOString() }, null, 2) +
      '\n',
  );
  log(`install done in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  return { installed: true, versions: st.versions };
}

// ---------------------------------------------------------------------------------------------
// process + port helpers
// ---------------------------------------------------------------------------------------------

const SERVICES = {
  neo4j: { title: 'Neo4j', mainClass: 'Neo4jLauncher' },
  kafka: { title: 'Kafka', mainClass: 'kafka.Kafka' },
};
const pidFile = (name) => path.join(RUN, `${name}.pid`);
const logFile = (name) => path.join(LOGS, `${name}.log`);

function readPid(name) {
  try {
    const pid = Number.parseInt(fs.readFileSync(pidFile(name), 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** True if pid is alive and (where /proc exists) is really the JVM of that service. */
function isOurProcess(pid, name) {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if (e.code !== 'EPERM') return false;
  }
  try {
    // The main class alone matches another checkout's server (several stacks share a machine), and a
    // stale pid file can name one of them after pid reuse: ours also names this checkout's .stack.
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.includes(SERVICES[name].mainClass) && cmdline.includes(STACK);
  } catch {
    return !fs.existsSync('/proc/self'); // no procfs (macOS): trust kill(0)
  }
}

/** Sends bytes to host:port and resolves with the first `want` reply bytes, or null on error/timeout. */
function tcpExchange(port, payload, want, timeoutMs = 2000) {
  return new Promise((resolve) => {
    const sock = net.connect({ host: HOST, port });
    let buf = Buffer.alloc(0);
    let done = false;
    const finish = (v) => {
      if (done) return;
      done = true;
      sock.destroy();
      resolve(v);
    };
    sock.setTimeout(timeoutMs, () => finish(null));
    sock.on('error', () => finish(null));
    sock.on('connect', () => {
      if (!payload) return finish(Buffer.alloc(0));
      sock.write(payload);
    });
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      const need = typeof want === 'function' ? want(buf) : want;
      if (need !== null && buf.length >= need) finish(buf);
    });
    sock.on('end', () => finish(null));
  });
}

const portOpen = async (port) => (await tcpExchange(port, null, 0, 1000)) !== null;

/** Bolt handshake: magic 0x6060B017 + four version proposals; a Bolt server answers 4 bytes. */
async function boltAnswers(port) {
  const hello = Buffer.from([
    0x60,
    0x60,
    0xb0,
    0x17,
    0x00,
    0x08,
    0x08,
    0x05, // 5.8 .. 5.0
    0x00,
    0x00,
    0x04,
    0x04, // 4.4
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
  ]);
  const r = await tcpExchange(port, hello, 4);
  return r !== null && r.length >= 4;
}

/** Kafka Metadata v4 request (no topics); resolves with the number of live brokers, or 0. */
async function kafkaLiveBrokers(port) {
  const clientId = Buffer.from('stack.mjs');
  const body = Buffer.alloc(2 + 2 + 4 + 2 + clientId.length + 4 + 1);
  let o = 0;
  o = body.writeInt16BE(3, o); // api_key Metadata
  o = body.writeInt16BE(4, o); // api_version
  o = body.writeInt32BE(4242, o); // correlation_id
  o = body.writeInt16BE(clientId.length, o);
  o += clientId.copy(body, o);
  o = body.writeInt32BE(0, o); // topics: empty array
  body.writeInt8(0, o); // allow_auto_topic_creation=false
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length);
  const r = await tcpExchange(port, Buffer.concat([size, body]), (b) =>
    b.length >= 4 ? 4 + b.readInt32BE(0) : null,
  );
  if (!r || r.length < 16) return 0;
  try {
    if (r.readInt32BE(4) !== 4242) return 0;
    return r.readInt32BE(12); // after size, correlation_id, throttle_time_ms: brokers array length
  } catch {
    return 0;
  }
}

async function serviceAnswers(name, cfg) {
  return name === 'neo4j' ? boltAnswers(cfg.neo4jPort) : (await kafkaLiveBrokers(cfg.kafkaPort)) > 0;
}

const servicePort = (name, cfg) => (name === 'neo4j' ? cfg.neo4jPort : cfg.kafkaPort);

const lastLines = (text, n) =>
  text
    .trimEnd()
    .split('\n')
    .slice(-n)
    .map((l) => (l.length > 400 ? `${l.slice(0, 400)} ...` : l))
    .join('\n');

function diagnostics(name, proc) {
  const own = proc
    ? logSince(name, proc.offset)
    : (() => {
        try {
          return fs.readFileSync(logFile(name), 'utf8');
        } catch {
          return '';
        }
      })();
  let msg = `see ${rel(logFile(name))}` + (own.trim() ? `:\n${lastLines(own, 25)}` : ' (no output yet)');
  if (name === 'neo4j') {
    const text = logSince(name, proc?.debugOffset ?? 0, { debug: true });
    if (text.trim()) msg += `\n--- ${rel(DEBUG_LOG)} ---\n${lastLines(text, 15)}`;
  }
  return msg;
}

// Cross-process lock so concurrent `up`s / test workers don't start two JVMs on the same data.
async function withLock(fn, log) {
  fs.mkdirSync(RUN, { recursive: true });
  const lockDir = path.join(RUN, 'lock');
  const deadline = Date.now() + 15 * 60 * 1000;
  let told = false;
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      fs.writeFileSync(path.join(lockDir, 'pid'), String(process.pid));
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      let owner = null;
      try {
        owner = Number.parseInt(fs.readFileSync(path.join(lockDir, 'pid'), 'utf8'), 10);
      } catch {}
      let alive = false;
      if (owner) {
        try {
          process.kill(owner, 0);
          alive = true;
        } catch (err) {
          alive = err.code === 'EPERM';
        }
      }
      const ageMs = (() => {
        try {
          return Date.now() - fs.statSync(lockDir).mtimeMs;
        } catch {
          return 0;
        }
      })();
      if ((owner && !alive) || (!owner && ageMs > 10_000)) {
        fs.rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${rel(lockDir)} (held by pid ${owner})`);
      if (!told) {
        log(`waiting for another stack.mjs (pid ${owner}) ...`);
        told = true;
      }
      await sleep(250);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lockDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// start
// ---------------------------------------------------------------------------------------------

/**
 * The JVM arguments of a Neo4j (the launcher) on `cfg.neo4jPort` with `cfg.neo4jHeap`: the stack's own
 * home and logs unless `where` names others (a benchmark's throwaway database).
 */
export function neo4jCommand(cfg, where = {}) {
  const { home = path.join(DATA, 'neo4j'), logs = path.join(LOGS, 'neo4j') } = where;
  return [
    `-Xms256m`,
    `-Xmx${cfg.neo4jHeap}`,
    '-XX:+UseG1GC',
    '-XX:-OmitStackTraceInFastThrow',
    '-XX:+DisableExplicitGC',
    '-Djdk.nio.maxCachedBufferSize=1024',
    '-Dio.netty.tryReflectionSetAccessible=true',
    '-Dlog4j2.disable.jmx=true',
    '-Djava.awt.headless=true',
    '--add-opens=java.base/java.nio=ALL-UNNAMED',
    '--add-opens=java.base/java.io=ALL-UNNAMED',
    '--add-opens=java.base/java.lang=ALL-UNNAMED',
    '--add-opens=java.base/sun.nio.ch=ALL-UNNAMED',
    '-cp',
    [path.join(LIB, 'launcher'), NEO4J_JARS].join(path.delimiter),
    'Neo4jLauncher',
    home,
    String(cfg.neo4jPort),
    logs,
  ];
}

const kafkaJvmBase = (heap) => [
  '-Xms128m',
  `-Xmx${heap}`,
  '-XX:+UseG1GC',
  '-XX:MaxGCPauseMillis=20',
  '-XX:InitiatingHeapOccupancyPercent=35',
  '-XX:+ExplicitGCInvokesConcurrent',
  '-Djava.awt.headless=true',
  '-Dorg.slf4j.simpleLogger.showDateTime=true',
  '-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd HH:mm:ss.SSS',
  `-Dkafka.logs.dir=${LOGS}`,
  '-cp',
  path.join(LIB, 'kafka', '*'),
];

function kafkaClusterId() {
  const idFile = path.join(DATA, 'kafka-cluster-id');
  try {
    const id = fs.readFileSync(idFile, 'utf8').trim();
    if (id) return id;
  } catch {}
  let id = null;
  try {
    // data formatted earlier but id file lost: reuse what is on disk
    id = (fs.readFileSync(path.join(DATA, 'kafka', 'meta.properties'), 'utf8').match(/^cluster\.id=(.+)$/m) ||
      [])[1];
  } catch {}
  if (!id) {
    // Same shape as org.apache.kafka.common.Uuid.randomUuid(): 16 bytes, base64url, no padding.
    do id = crypto.randomBytes(16).toString('base64url');
    while (id.startsWith('-') || id.startsWith('_'));
  }
  fs.mkdirSync(DATA, { recursive: true });
  fs.writeFileSync(idFile, id + '\n');
  return id;
}

/** Writes .stack/run/kafka.properties: the repo template + local ports and log.dirs. */
function kafkaConfig(cfg) {
  const logDirs = path.join(DATA, 'kafka');
  const overrides = {
    'log.dirs': logDirs,
    listeners: `PLAINTEXT://${HOST}:${cfg.kafkaPort},CONTROLLER://${HOST}:${cfg.kafkaControllerPort}`,
    'advertised.listeners': `PLAINTEXT://${HOST}:${cfg.kafkaPort}`,
    'controller.quorum.voters': `1@${HOST}:${cfg.kafkaControllerPort}`,
  };
  const file = path.join(RUN, 'kafka.properties');
  const text =
    fs.readFileSync(KAFKA_TEMPLATE, 'utf8') +
    '\n# ---- generated by scripts/stack.mjs (later keys win) ----\n' +
    Object.entries(overrides)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n') +
    '\n';
  fs.mkdirSync(RUN, { recursive: true });
  fs.writeFileSync(file, text);
  return { file, logDirs };
}

function formatKafkaStorage(cfg, log) {
  const { file, logDirs } = kafkaConfig(cfg);
  if (fs.existsSync(path.join(logDirs, 'meta.properties'))) return file;
  const id = kafkaClusterId();
  log(`formatting Kafka storage ${rel(logDirs)} (cluster id ${id})`);
  const r = spawnSync(
    javaBin('java'),
    [
      ...kafkaJvmBase('256m'),
      '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
      'kafka.tools.StorageTool',
      'format',
      '--ignore-formatted',
      '-t',
      id,
      '-c',
      file,
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (r.error || r.status !== 0) {
    throw new Error(
      `Kafka storage format failed (${r.error?.message ?? `exit ${r.status}`}):\n${r.stdout}\n${r.stderr}`,
    );
  }
  return file;
}

function spawnDetached(name, args) {
  fs.mkdirSync(LOGS, { recursive: true });
  fs.mkdirSync(RUN, { recursive: true });
  const file = logFile(name);
  const fd = fs.openSync(file, 'a');
  fs.writeSync(
    fd,
    `\n===== ${new Date().toISOString()} starting ${name} (stack.mjs pid ${process.pid}) =====\n`,
  );
  const offset = fs.fstatSync(fd).size;
  let child;
  try {
    child = spawn(javaBin('java'), args, { cwd: ROOT, detached: true, stdio: ['ignore', fd, fd] });
  } finally {
    fs.closeSync(fd);
  }
  const state = { exited: null, spawnError: null };
  const debugOffset = name === 'neo4j' ? debugLogSize() : 0;
  child.on('error', (e) => (state.spawnError = e));
  child.on('exit', (code, sig) => (state.exited = code ?? sig));
  child.unref();
  if (child.pid) fs.writeFileSync(pidFile(name), `${child.pid}\n`);
  return { child, state, offset, debugOffset };
}

const debugLogSize = () => fs.statSync(DEBUG_LOG, { throwIfNoEntry: false })?.size ?? 0;

/** The bytes a service's console log (or, with `debug`, Neo4j's debug.log) holds past `offset`, and from where. */
function readLog(name, offset, { debug = false } = {}) {
  try {
    const fd = fs.openSync(debug ? DEBUG_LOG : logFile(name), 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const from = size < offset ? 0 : offset; // smaller than it was: rotated, so all of it is new
      const buf = Buffer.alloc(size - from);
      fs.readSync(fd, buf, 0, buf.length, from);
      return { buf, from };
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return { buf: Buffer.alloc(0), from: offset };
  }
}

/** What a service's console log (or, with `debug`, Neo4j's debug.log) holds past `offset`; '' if none. */
const logSince = (name, offset, opts) => readLog(name, offset, opts).buf.toString('utf8');

/**
 * What each service logs while it gets its data back after a stop, as `recoveryDeadline` reads it: the
 * line of each step (`line`), its progress in words (`note`), and what the wait says it is doing.
 *  - Neo4j: debug.log's `[o.n.k.r.Recovery]` lines, one at the start of a transaction-log replay and one
 *    per tenth done. Only an unclean stop needs one.
 *  - Kafka: its console log's `Completed load of Log(…) … (N/M completed in <dir>)`, one per partition's
 *    log, then `Log loaded for partition …` as it leads each partition, then `Finished loading offsets and
 *    group metadata` per offsets partition. Every start does these (3 s for the 680 partitions, 2.7 GB,
 *    of a local stack here that had run the suite and the benches many times); an unclean one also
 *    recovers each unflushed segment (4.7–7.7 s for the same). After an unclean stop it then waits,
 *    without a progress line, for its previous registration to expire (broker.session.timeout.ms, 9 s):
 *    fixed, whatever the data.
 */
export const RECOVERY = {
  neo4j: {
    doing: 'is recovering its transaction logs',
    line: /^.*\[o\.n\.k\.r\.Recovery\].*$/gm,
    note: (l) => l.replace(/^.*\[o\.n\.k\.r\.Recovery\]\s*(\[[^\]]*\])?\s*/, ''),
  },
  kafka: {
    doing: 'is loading its logs',
    line: /^.*(?:Completed load of Log\(|Log loaded for partition |Finished loading offsets and group metadata).*$/gm,
    note: (l) => {
      const n = l.match(/\((\d+\/\d+) completed in /)?.[1];
      if (n) return `${n} loaded`;
      return l.includes('Finished loading offsets') ? 'consumer offsets' : 'leading its partitions';
    },
  },
};

/**
 * The deadline of a start, moved on by the service's progress in getting its data back (RECOVERY): the
 * progress lines in `text`, what its log gained since the last look. `wait` holds the deadline so far and
 * the newest such line seen; when `text` ends with another one, the deadline moves and `note` is that
 * line's progress, else ''.
 *
 * Why: after an unclean stop (a SIGKILL, a crash, a stop that outlived its grace) Neo4j replays its
 * transaction logs before it answers, and Kafka recovers its logs' unflushed segments; on a big graph or
 * ledger that outlasts STACK_START_TIMEOUT_S. Killing the service then throws the work away (the next
 * start begins it again), so a fixed deadline can never be met: `up` after such a stop failed every time
 * on a 4.3 GB graph here. Each new progress line moves the deadline to a whole timeout from then; a
 * start that stops making progress still fails one timeout after its last line.
 */
export function recoveryDeadline(wait, text, now, timeoutMs, service = 'neo4j') {
  const { line, note } = RECOVERY[service];
  const last = text.match(line)?.at(-1) ?? '';
  if (!last || last === wait.last) return { ...wait, note: '' };
  return { deadline: Math.max(wait.deadline, now + timeoutMs), last, note: note(last) };
}

/**
 * The whole lines a service's progress log (RECOVERY) gained past `offset`, and where the next read
 * starts: a wait reads each line once, not the whole start's log every poll (~3.5 MB for Kafka's 680
 * partitions here). A line still being written is left for the next read.
 */
function progressSince(name, offset) {
  const { buf, from } = readLog(name, offset, { debug: name === 'neo4j' });
  const whole = buf.lastIndexOf(0x0a) + 1;
  return { text: buf.subarray(0, whole).toString('utf8'), next: from + whole };
}
/** Where that text ends now: what a wait for a service already running reads from. */
const progressLogSize = (name) =>
  name === 'neo4j' ? debugLogSize() : (fs.statSync(logFile(name), { throwIfNoEntry: false })?.size ?? 0);
/** A wait's progress notes come at most this often (Kafka writes one per partition's log). */
const NOTE_EVERY_MS = 5_000;

async function waitReady(name, cfg, { deadline, proc, abort, log = () => {} }) {
  const { title } = SERVICES[name];
  const port = servicePort(name, cfg);
  let wait = { deadline, last: '' };
  let notedAt = Date.now();
  // A service of ours already running (reused) may be recovering too: its lines from now on count.
  let progressAt = proc ? (name === 'neo4j' ? proc.debugOffset : proc.offset) : progressLogSize(name);
  for (;;) {
    if (abort?.aborted) throw new Error(`${title} start aborted: ${abort.reason}`);
    if (proc?.state.spawnError)
      throw new Error(`${title}: cannot start ${javaBin('java')}: ${proc.state.spawnError.message}`);
    if (proc && proc.state.exited !== null) {
      fs.rmSync(pidFile(name), { force: true });
      throw new Error(`${title} exited (${proc.state.exited}) during startup; ${diagnostics(name, proc)}`);
    }
    // Neo4j prints READY once the default database is online; Kafka answers Metadata with a live broker.
    const ready =
      name === 'neo4j' && proc
        ? logSince(name, proc.offset).includes('NEO4J READY') && (await boltAnswers(port))
        : await serviceAnswers(name, cfg);
    if (ready) return;
    const progress = progressSince(name, progressAt);
    progressAt = progress.next;
    wait = recoveryDeadline(wait, progress.text, Date.now(), cfg.timeoutMs, name);
    if (wait.note && Date.now() - notedAt >= NOTE_EVERY_MS) {
      notedAt = Date.now();
      log(`${title} ${RECOVERY[name].doing} (${wait.note}); waiting while it progresses`);
    }
    if (Date.now() > wait.deadline) {
      throw new Error(
        `${title} did not become ready on ${HOST}:${port} within ${cfg.timeoutMs / 1000}s` +
          (wait.last ? ' of its last recovery progress' : '') +
          `; ${diagnostics(name, proc)}`,
      );
    }
    await sleep(200);
  }
}

/**
 * Decides, without starting anything, what to do for one service:
 * 'reuse' (our pid file + live JVM), 'external' (port answers the right protocol, no pid file) or 'start'.
 * Throws if the port is taken by something else.
 */
async function planService(name, cfg) {
  const { title } = SERVICES[name];
  const port = servicePort(name, cfg);
  const pid = readPid(name);
  if (isOurProcess(pid, name)) return { action: 'reuse', pid };
  if (pid) fs.rmSync(pidFile(name), { force: true }); // stale pid file
  if (await portOpen(port)) {
    if (await serviceAnswers(name, cfg)) return { action: 'external' };
    throw new Error(
      `${HOST}:${port} is in use by something that is not a working ${title}; ` +
        `stop it or set ${name === 'neo4j' ? 'STACK_NEO4J_BOLT_PORT' : 'STACK_KAFKA_PORT'}`,
    );
  }
  if (name === 'kafka' && (await portOpen(cfg.kafkaControllerPort))) {
    throw new Error(
      `Kafka controller port ${HOST}:${cfg.kafkaControllerPort} is in use; set STACK_KAFKA_CONTROLLER_PORT`,
    );
  }
  return { action: 'start' };
}

/** Carries out a plan; resolves with 'started' | 'reused' | 'external'. */
async function startService(name, cfg, plan, log, abort) {
  const { title } = SERVICES[name];
  const port = servicePort(name, cfg);
  const deadline = Date.now() + cfg.timeoutMs;

  if (plan.action === 'reuse') {
    if (!(await serviceAnswers(name, cfg)))
      log(`${title} (pid ${plan.pid}) is running but not answering on ${HOST}:${port} yet; waiting`);
    await waitReady(name, cfg, { deadline, abort, log });
    log(`${title} already running (pid ${plan.pid}) on ${HOST}:${port}`);
    return 'reused';
  }
  if (plan.action === 'external') {
    log(`${title} answering on ${HOST}:${port} was not started by stack.mjs (no pid file); using it`);
    return 'external';
  }

  const t0 = Date.now();
  let args;
  if (name === 'neo4j') {
    fs.mkdirSync(path.join(DATA, 'neo4j'), { recursive: true });
    args = neo4jCommand(cfg);
  } else {
    const file = formatKafkaStorage(cfg, log);
    args = [
      ...kafkaJvmBase(cfg.kafkaHeap),
      'kafka.Kafka',
      file,
      '--override',
      `log.dirs=${path.join(DATA, 'kafka')}`,
    ];
  }
  log(`starting ${title} on ${HOST}:${port} (log ${rel(logFile(name))})`);
  const proc = spawnDetached(name, args);
  try {
    await waitReady(name, cfg, { deadline, proc, abort, log });
  } catch (e) {
    if (abort && !abort.aborted) Object.assign(abort, { aborted: true, reason: `${title} failed` });
    if (proc.child.pid && proc.state.exited === null) await stopPid(name, proc.child.pid, log, 10_000);
    fs.rmSync(pidFile(name), { force: true });
    throw e;
  }
  log(`${title} ready in ${((Date.now() - t0) / 1000).toFixed(1)}s (pid ${proc.child.pid})`);
  return 'started';
}

// ---------------------------------------------------------------------------------------------
// stop
// ---------------------------------------------------------------------------------------------

async function stopPid(name, pid, log, graceMs = 30_000) {
  const { title } = SERVICES[name];
  const t0 = Date.now();
  try {
    process.kill(pid, 'SIGTERM');
  } catch (e) {
    if (e.code === 'ESRCH') return;
    throw e;
  }
  while (Date.now() - t0 < graceMs) {
    if (!isOurProcess(pid, name)) {
      log(`${title} (pid ${pid}) stopped in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
      return;
    }
    await sleep(100);
  }
  log(`${title} (pid ${pid}) still running after ${graceMs / 1000}s; sending SIGKILL`);
  try {
    process.kill(pid, 'SIGKILL');
  } catch {}
  while (isOurProcess(pid, name)) await sleep(100);
}

async function stopService(name, log) {
  const pid = readPid(name);
  if (pid && isOurProcess(pid, name)) await stopPid(name, pid, log);
  else if (pid) log(`${SERVICES[name].title}: stale pid file (pid ${pid} not running)`);
  fs.rmSync(pidFile(name), { force: true });
}

async function stopServices(names, log) {
  // Independent JVMs: stop them in parallel.
  await Promise.all(names.map((n) => stopService(n, log)));
}

// ---------------------------------------------------------------------------------------------
// public API
// ---------------------------------------------------------------------------------------------

/**
 * Installs if needed, starts Neo4j + Kafka unless already running, waits until both answer.
 * @returns {Promise<{neo4jUri: string, kafkaBrokers: string, startedByUs: string[], stop: () => Promise<void>}>}
 */
export async function ensureStack({ log } = {}) {
  log = mkLog(log);
  const cfg = config();
  return withLock(async () => {
    await install({ log });
    fs.mkdirSync(DATA, { recursive: true });
    const names = ['neo4j', 'kafka'];
    const plans = await Promise.all(names.map((n) => planService(n, cfg))); // fail before starting anything
    const abort = { aborted: false, reason: '' }; // one failure stops the other's wait
    const results = await Promise.allSettled(names.map((n, i) => startService(n, cfg, plans[i], log, abort)));
    const startedByUs = names.filter(
      (n, i) => results[i].status === 'fulfilled' && results[i].value === 'started',
    );
    const failed = results.filter((r) => r.status === 'rejected');
    // report the root cause first, the aborted sibling after it
    failed.sort((a, b) => /start aborted/.test(a.reason.message) - /start aborted/.test(b.reason.message));
    if (failed.length) {
      await stopServices(startedByUs, log); // leave nothing half-up that we started
      throw failed.length === 1
        ? failed[0].reason
        : new AggregateError(
            failed.map((f) => f.reason),
            failed.map((f) => f.reason.message).join('\n\n'),
          );
    }
    let stopped = false;
    return {
      neo4jUri: `bolt://${HOST}:${cfg.neo4jPort}`,
      kafkaBrokers: `${HOST}:${cfg.kafkaPort}`,
      startedByUs,
      stop: async () => {
        if (stopped) return;
        stopped = true;
        await withLock(() => stopServices(startedByUs, log), log);
      },
    };
  }, log);
}

/**
 * Fault runs: stops one service this script started (`hard`: SIGKILL, as a crash; else a clean stop),
 * keeps it down for `downMs`, and starts it again on the same data, waiting until it answers. Refuses a
 * service it did not start: it never restarts someone else's server.
 */
export async function restartService(name, { log, hard = false, downMs = 0 } = {}) {
  log = mkLog(log);
  const cfg = config();
  await withLock(async () => {
    const pid = readPid(name);
    if (!pid || !isOurProcess(pid, name))
      throw new Error(`${SERVICES[name].title} was not started by stack.mjs here: not restarting it`);
    if (hard) {
      process.kill(pid, 'SIGKILL');
      while (isOurProcess(pid, name)) await sleep(100);
      fs.rmSync(pidFile(name), { force: true });
      log(`${SERVICES[name].title} (pid ${pid}) killed`);
    } else await stopService(name, log);
    await sleep(downMs);
    await startService(name, cfg, await planService(name, cfg), log);
  }, log);
}

/** Stops every service that has a pid file in .stack/run (whoever started it). */
export async function stopStack({ log } = {}) {
  log = mkLog(log);
  await withLock(() => stopServices(['kafka', 'neo4j'], log), log);
}

export async function stackStatus() {
  const cfg = config();
  const st = fs.existsSync(POM) ? installState() : { ok: false };
  const out = { installed: st.ok, versions: st.versions, services: {} };
  for (const name of ['neo4j', 'kafka']) {
    const pid = readPid(name);
    const ours = isOurProcess(pid, name);
    const port = servicePort(name, cfg);
    const answering = await serviceAnswers(name, cfg);
    const rss = (() => {
      try {
        const kb = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)/m)[1];
        return `${Math.round(Number(kb) / 1024)} MiB`;
      } catch {
        return undefined;
      }
    })();
    out.services[name] = {
      state: ours ? (answering ? 'running' : 'starting/unhealthy') : answering ? 'external' : 'stopped',
      pid: ours ? pid : undefined,
      address: `${HOST}:${port}`,
      rss: ours ? rss : undefined,
      log: rel(logFile(name)),
    };
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// CLI
// ---------------------------------------------------------------------------------------------

async function main(argv) {
  const cmd = argv[0];
  const log = defaultLog;
  switch (cmd) {
    case 'install':
      await install({ log, force: argv.includes('--force') });
      if (!argv.includes('--force')) log(`installed: ${JSON.stringify(pomVersions())} in ${rel(LIB)}`);
      return;
    case 'up': {
      const s = await ensureStack({ log });
      process.stdout.write(`NEO4J_URI=${s.neo4jUri}\nKAFKA_BROKERS=${s.kafkaBrokers}\n`);
      return;
    }
    case 'down':
      await stopStack({ log });
      return;
    case 'status': {
      const s = await stackStatus();
      console.log(
        `installed: ${s.installed ? `yes (Neo4j ${s.versions.neo4j}, Kafka ${s.versions.kafka})` : 'no'}`,
      );
      for (const [name, v] of Object.entries(s.services)) {
        console.log(
          `${name.padEnd(6)} ${v.state.padEnd(9)} ${v.address}` +
            (v.pid ? `  pid ${v.pid}` : '') +
            (v.rss ? `  rss ${v.rss}` : '') +
            `  log ${v.log}`,
        );
      }
      return;
    }
    case 'reset':
      await stopStack({ log });
      fs.rmSync(DATA, { recursive: true, force: true });
      log(`deleted ${rel(DATA)}`);
      return;
    default:
      console.error('usage: node scripts/stack.mjs install [--force] | up | down | status | reset');
      process.exitCode = cmd ? 2 : 0;
  }
}

const isCli = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isCli) {
  main(process.argv.slice(2)).catch((e) => {
    console.error(`[stack] ERROR: ${e.message}`);
    process.exit(1);
  });
}
