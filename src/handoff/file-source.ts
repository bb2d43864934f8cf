/**
 * SessionSource over a directory of `*.json` files, one Hermes-style session per file (see session-schema.ts).
 * For fixtures and offline canaries. The listing reads only `id`, `source`, `owner`, `updated_at`, `revision`;
 * a file without a string `id` is listed under its file name so it is still considered (and deferred).
 */
import { readFile, readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { SessionSource, SessionSummary } from './ports.ts';

export function fileSessionSource(dir: string): SessionSource {
  let byId = new Map<string, string>();
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
  return {
    async listSessions() {
      const names = (await readdir(dir)).filter((n) => n.endsWith('.json')).sort();
      const next = new Map<string, string>();
      const out: SessionSummary[] = [];
      for (const name of names) {
        const file = join(dir, name);
        let raw: unknown = null;
        try {
          raw = JSON.parse(await readFile(file, 'utf8'));
        } catch {
          raw = null;
        }
        const o = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
        const id = str(o.id) ?? `file:${basename(name, '.json')}`;
        if (next.has(id)) continue; // duplicate ids: first file wins, deterministic by name
        next.set(id, file);
        out.push({
          id,
          source: str(o.source) ?? '',
          owner: str(o.owner),
          updatedAt: str(o.updated_at),
          revision: str(o.revision),
        });
      }
      byId = next;
      return out;
    },
    async getSession(id) {
      const file = byId.get(id);
      if (!file) throw new Error('unknown session');
      const text = await readFile(file, 'utf8');
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return undefined; // unparseable → MALFORMED downstream
      }
    },
  };
}
