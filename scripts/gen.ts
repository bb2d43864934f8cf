// Writes generated artifacts: the ledger's JSON Schemas into streams/. `--check` fails when stale.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventJsonSchemas, renderSchema } from '../src/domain/event-schemas.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', 'streams');
const check = process.argv.includes('--check');
let stale = 0;
for (const [file, schema] of Object.entries(eventJsonSchemas())) {
  const path = join(root, file);
  const text = renderSchema(schema);
  let current = '';
  try {
    current = readFileSync(path, 'utf8');
  } catch {
    /* missing */
  }
  if (current === text) continue;
  if (check) {
    process.stderr.write(`stale: streams/${file}\n`);
    stale++;
  } else {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    process.stdout.write(`wrote streams/${file}\n`);
  }
}
if (stale) {
  process.stderr.write('run `npm run gen` and commit the result\n');
  process.exit(1);
}
