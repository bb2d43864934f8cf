import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LedgerEvent } from '../../src/domain/events.ts';
import type { DecodeResult } from '../../src/domain/event-wire.ts';
import { MemoryState } from '../../src/domain/memory-state.ts';
import { CypherExecutor } from '../../src/adapters/neo4j/executor.ts';
import { recordRow } from '../../src/adapters/neo4j/mapping.ts';
import { applyMigrations } from '../../src/adapters/neo4j/migrations.ts';
import { Neo4jGraphAdmin } from '../../src/adapters/neo4j/admin.ts';
import type { Ledger } from '../../src/ports/ledger.ts';
import { javaBin, NEO4J_JARS, neo4jCommand } from '../../scripts/stack.mjs';
import { freePort } from '../support/processes.ts';

/*
 * What an offline rebuild would take on this machine (issue #11: the rebuild's "what would move it"):
 * the ledger read and decoded, folded in process, written as CSV, loaded by `neo4j-admin database import
 * full` into a database of its own, that database started, the empty lists the import cannot write set,
 * and Muninn's migrations applied (its 38 indexes and constraints populated). Each step is timed; their
 * sum bounds such a rebuild from below (a real one would also stop the live database and swap the store
 * in). Then the imported graph's state hash is compared with the replay's: the same domain state.
 * Not a rebuild: a CSV mapping of its own that knows only what the bench's proposals fold to (Record,
 * Revision, Receipt, HAS_REVISION), into a throwaway Neo4j on a spare port; the stack's database is left
 * alone. Neo4j Community cannot populate indexes during an import (`--schema` needs Enterprise's block
 * format), so they are populated after the start.
 */

const ARRAY = '\u001f'; // the import's array delimiter: a character no bench value holds

type Row = Record<string, unknown>;

function typeOf(v: unknown): string {
  // Every number as a float: the projection's driver sends JavaScript numbers so (a Revision's version is
  // 1.0 in the graph, and the state hash keys its relationships by that text).
  if (typeof v === 'number') return 'double';
  if (typeof v === 'boolean') return 'boolean';
  if (Array.isArray(v)) return typeof v[0] === 'number' ? 'double[]' : 'string[]';
  return 'string';
}

const quoted = (s: string) => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/**
 * Rows as an import CSV: an ID column, then every property any row holds (null and [] left empty).
 * Returns the list-typed properties: the import cannot write an empty list (an empty cell is no property,
 * `""` too), which the projection does, so they are set afterwards (`emptyLists`).
 */
function csv(file: string, idSpace: string, rows: readonly Row[], idOf: (r: Row) => string): string[] {
  const types = new Map<string, string>();
  const lists = new Set<string>();
  for (const r of rows)
    for (const [k, v] of Object.entries(r)) {
      if (Array.isArray(v)) lists.add(k);
      if (v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0) && !types.has(k))
        types.set(k, typeOf(v));
    }
  const cols = [...types.keys()];
  const cell = (v: unknown) =>
    v === null || v === undefined ? '' : quoted(Array.isArray(v) ? v.map(String).join(ARRAY) : String(v));
  const lines = [[`:ID(${idSpace})`, ...cols.map((c) => `${c}:${types.get(c)}`)].join(',')];
  for (const r of rows) lines.push([quoted(idOf(r)), ...cols.map((c) => cell(r[c]))].join(','));
  writeFileSync(file, lines.join('\n') + '\n');
  return [...lists];
}

/** The empty lists the import could not write, set where a list property is missing, per label. */
async function emptyLists(db: CypherExecutor, lists: Record<string, string[]>): Promise<void> {
  for (const [label, keys] of Object.entries(lists)) {
    if (keys.length === 0) continue;
    const sets = keys.map((k) => `n.${k} = coalesce(n.${k}, [])`).join(', ');
    await db.autoCommit(
      'bench.offline.lists',
      `MATCH (n:${label}) CALL (n) { SET ${sets} } IN TRANSACTIONS OF 10000 ROWS`,
    );
  }
}

interface CsvFiles {
  readonly files: Record<string, string>;
  /** Each label's list-typed properties. */
  readonly lists: Record<string, string[]>;
}

/** The fold's end state as the import's four files (nodes by label, the HAS_REVISION relationships). */
function writeCsv(state: MemoryState, dir: string): CsvFiles {
  const ch = state.changes();
  const records: Row[] = [];
  const revisions: Row[] = [];
  const edges: string[] = [];
  for (const r of ch.records) {
    const row = recordRow(r);
    records.push({ ...row.props, tenant: r.tenant, id: r.id, stamp: 1 });
    for (const v of row.revisions) {
      revisions.push({ ...v, tenant: r.tenant, recordId: r.id });
      edges.push(`${quoted(`${r.tenant}/${r.id}`)},${quoted(v.eventId)}`);
    }
  }
  const f = (name: string) => join(dir, `${name}.csv`);
  const receipts = ch.receipts as unknown as Row[];
  const lists = {
    Record: csv(f('records'), 'Record', records, (r) => `${String(r['tenant'])}/${String(r['id'])}`),
    Revision: csv(f('revisions'), 'Revision', revisions, (r) => String(r['eventId'])),
    Receipt: csv(
      f('receipts'),
      'Receipt',
      receipts,
      (r) => `${String(r['tenant'])}/${String(r['idempotencyKey'])}`,
    ),
  };
  writeFileSync(f('has-revision'), [':START_ID(Record),:END_ID(Revision)', ...edges].join('\n') + '\n');
  const files = { Record: f('records'), Revision: f('revisions'), Receipt: f('receipts') };
  return { files: { ...files, HAS_REVISION: f('has-revision') }, lists };
}

/** `neo4j-admin database import full` (the AdminTool in the stack's jars) into `home`'s data directory. */
function importCsv(home: string, files: Record<string, string>): void {
  mkdirSync(join(home, 'conf'), { recursive: true });
  writeFileSync(join(home, 'conf', 'neo4j.conf'), `server.directories.data=${join(home, 'data')}\n`);
  const args = ['-cp', NEO4J_JARS, 'org.neo4j.cli.AdminTool', 'database', 'import', 'full'];
  args.push(
    'neo4j',
    '--multiline-fields=true',
    `--array-delimiter=U+001F`,
    `--report-file=${join(home, 'import.report')}`,
  );
  args.push(...['Record', 'Revision', 'Receipt'].map((l) => `--nodes=${l}=${files[l]}`));
  args.push(`--relationships=HAS_REVISION=${files['HAS_REVISION']}`);
  const env = { ...process.env, NEO4J_HOME: home, NEO4J_CONF: join(home, 'conf') };
  const r = spawnSync(javaBin('java'), args, { env, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`import failed (${r.status}): ${(r.stderr || r.stdout).slice(-2000)}`);
}

/**
 * A Neo4j on `home` (its data/databases/neo4j) run as the stack runs its own (the same JVM arguments, heap
 * STACK_NEO4J_HEAP or 1g), resolved once it prints NEO4J READY.
 */
async function startNeo4j(home: string, port: number): Promise<ChildProcess> {
  const cfg = { neo4jPort: port, neo4jHeap: process.env['STACK_NEO4J_HEAP'] || '1g' };
  const args = neo4jCommand(cfg, { home, logs: join(home, 'logs') });
  const child = spawn(javaBin('java'), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`Neo4j not ready in 120 s: ${out.slice(-2000)}`)),
      120_000,
    );
    const seen = (b: Buffer) => {
      out += String(b);
      if (out.includes('NEO4J READY')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', (b: Buffer) => (out += String(b)));
    child.on('exit', (code) => reject(new Error(`Neo4j exited (${code}): ${out.slice(-2000)}`)));
  });
  return child;
}

/** The whole ledger of the config's topic, decoded (what a rebuild reads before it applies anything). */
async function readEvents(
  ledger: Ledger,
  decode: (bytes: Uint8Array) => Promise<DecodeResult>,
): Promise<LedgerEvent[]> {
  const events: LedgerEvent[] = [];
  await ledger.readAll(async (batch) => {
    for (const m of batch.messages) {
      if (!m.value) continue;
      const r = await decode(m.value);
      if (r.ok) events.push(r.event);
    }
  }, 10_000);
  return events;
}

/**
 * Prints each step's seconds and what their sum makes in events/s, and whether the imported graph's state
 * hash (taken after the clock stops) equals the replay's: the CSV mapping wrote the same domain state.
 */
export async function offlineRebuild(
  ledger: Ledger,
  decode: (bytes: Uint8Array) => Promise<DecodeResult>,
  replay: { readonly hash: string; readonly nodes: number },
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'muninn-offline-'));
  const steps: Array<[string, number]> = [];
  let t = performance.now();
  const step = (name: string) => {
    const now = performance.now();
    steps.push([name, (now - t) / 1000]);
    t = now;
  };
  let neo4j: ChildProcess | null = null;
  try {
    const events = await readEvents(ledger, decode);
    step('read and decode');
    const state = new MemoryState();
    for (const e of events) state.apply(e);
    step('fold');
    const { files, lists } = writeCsv(state, dir);
    step('write CSV');
    importCsv(join(dir, 'home'), files);
    step('neo4j-admin import');
    const port = await freePort();
    neo4j = await startNeo4j(join(dir, 'home'), port);
    step('start Neo4j');
    const db = CypherExecutor.connect(`bolt://127.0.0.1:${port}`, 'neo4j', '', 'neo4j');
    await emptyLists(db, lists);
    step('empty lists set');
    await applyMigrations(db);
    step('migrations, indexes populated');
    const total = steps.reduce((s, [, x]) => s + x, 0);
    const same = await new Neo4jGraphAdmin(db).stateHash();
    await db.close();
    console.log(
      `offline rebuild of ${events.length} events, as a bound (rebuild-offline.ts; the stack's graph untouched):`,
    );
    for (const [name, s] of steps) console.log(`  ${name.padEnd(30)} ${s.toFixed(1)} s`);
    console.log(`  total ${total.toFixed(1)} s = ${Math.round(events.length / total)} events/s`);
    const equal = same.hash === replay.hash ? 'equal to' : `NOT equal to (${same.hash.slice(0, 16)}…)`;
    console.log(`  state hash ${equal} the replay's, ${same.nodes} nodes (the replay: ${replay.nodes})`);
  } finally {
    if (neo4j && neo4j.exitCode === null) {
      const exited = new Promise((r) => neo4j!.once('exit', r));
      neo4j.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}
