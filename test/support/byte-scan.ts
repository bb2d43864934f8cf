import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A raw byte scan of files on disk (Neo4j store and transaction logs, Kafka log segments): which of
 * `needles` occur in which file, as UTF-8 and lower-cased UTF-8 (Lucene keeps lower-cased terms).
 */
export function scanFiles(root: string, needles: readonly string[]): Map<string, string[]> {
  const hits = new Map<string, string[]>();
  const patterns = needles.flatMap((n) => [
    { n, b: Buffer.from(n, 'utf8') },
    { n, b: Buffer.from(n.toLowerCase(), 'utf8') },
  ]);
  for (const file of walk(root)) {
    let buf: Buffer;
    try {
      buf = readFileSync(file);
    } catch {
      continue; // a file rotated away while we walked
    }
    for (const p of patterns) {
      if (buf.includes(p.b)) {
        const list = hits.get(p.n) ?? [];
        if (!list.includes(file)) list.push(file);
        hits.set(p.n, list);
      }
    }
  }
  return hits;
}

function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    let st;
    try {
      st = statSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory()) yield* walk(p);
    else if (st.isFile()) yield p;
  }
}
