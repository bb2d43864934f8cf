import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { sha256Hex } from '../../domain/canonical.ts';
import type { Executor } from './executor.ts';

/** Numbered migrations in cypher/migrations, applied once each, in order, and recorded in the graph. */
const DIR = fileURLToPath(new URL('../../../cypher/migrations/', import.meta.url));

export interface Migration {
  readonly id: string;
  readonly checksum: string;
  readonly statements: readonly string[];
}

export async function loadMigrations(dir = DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{3}_.+\.cypher$/.test(f)).sort();
  return Promise.all(
    files.map(async (f) => {
      const text = await readFile(`${dir}${f}`, 'utf8');
      const statements = text
        .split('\n')
        .filter((l) => !l.trim().startsWith('//'))
        .join('\n')
        .split(';')
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
      return { id: f.replace(/\.cypher$/, ''), checksum: sha256Hex(text), statements };
    }),
  );
}

export async function applyMigrations(db: Executor): Promise<string[]> {
  const all = await loadMigrations();
  const done = await db.read<{ id: string; checksum: string }>(
    'migrations.list',
    'MATCH (m:Migration) RETURN m.id AS id, m.checksum AS checksum',
  );
  const applied = new Map(done.records.map((r) => [r.get('id'), r.get('checksum')]));
  const newly: string[] = [];
  for (const m of all) {
    const prior = applied.get(m.id);
    if (prior !== undefined) {
      if (prior !== m.checksum) throw new Error(`migration ${m.id} was changed after it was applied`);
      continue;
    }
    for (const s of m.statements) await db.autoCommit(`migration.${m.id}`, s);
    await db.write('migrations.record', 'MERGE (m:Migration {id: $id}) SET m.checksum = $checksum', {
      id: m.id,
      checksum: m.checksum,
    });
    newly.push(m.id);
  }
  await db.autoCommit('migrations.await', 'CALL db.awaitIndexes(300)');
  return newly;
}

export async function migrationsApplied(db: Executor): Promise<boolean> {
  const all = await loadMigrations();
  const res = await db.read<{ n: number }>(
    'migrations.count',
    'MATCH (m:Migration) WHERE m.id IN $ids RETURN count(m) AS n',
    {
      ids: all.map((m) => m.id),
    },
  );
  return res.records[0]?.get('n') === all.length;
}
