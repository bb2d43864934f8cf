// Feeds the environment a rendered chart gives each process (its ConfigMap, then its Secret, as the pods'
// envFrom order does) to the one config loader, per role, so a chart whose values the service would refuse at
// start-up (e.g. production without MUNINN_FINGERPRINT_KEY) fails the chart check instead of a rollout.
// Usage: helm template … | node --import tsx scripts/chart-env-check.ts
// Reads only what the chart's own templates write: `data:` maps of `KEY: "value"` lines (values quoted).
import { readFileSync } from 'node:fs';
import { ConfigError, load } from '../src/config/index.ts';

function dataOf(docs: readonly string[], kind: string): Record<string, string> {
  const doc = docs.find((d) => new RegExp(`^kind: ${kind}$`, 'm').test(d));
  if (!doc) throw new Error(`the render has no ${kind}`);
  const out: Record<string, string> = {};
  const body = doc.slice(doc.search(/^data:$/m));
  for (const m of body.matchAll(/^ {2}([A-Z0-9_]+): (".*")$/gm)) {
    const value = JSON.parse(m[2]!) as string;
    out[m[1]!] = kind === 'Secret' ? Buffer.from(value, 'base64').toString('utf8') : value;
  }
  return out;
}

const docs = readFileSync(0, 'utf8').split(/^---$/m);
const env = { ...dataOf(docs, 'ConfigMap'), ...dataOf(docs, 'Secret') };
let failed = false;
for (const role of ['api', 'projector'] as const) {
  try {
    const c = load({ ...env, MUNINN_ROLE: role });
    process.stdout.write(`chart env: role ${role} accepted by the config loader (MUNINN_ENV=${c.env})\n`);
  } catch (e) {
    failed = true;
    process.stderr.write(
      `chart env: role ${role} refused: ${e instanceof ConfigError ? e.message : String(e)}\n`,
    );
  }
}
process.exit(failed ? 1 : 0);
