/**
 * SessionSource over a directory of `*.json` files, one Hermes-style session per file (see session-schema.ts).
 * For fixtures and offline canaries. The listing reads only `id`, `source`, `owner`, `updated_at`, `revision`;
 * a file without a string `id` is listed under its file name so it is still considered (and deferred).
 */
import type { TextFiles } from '../ports/text-files.ts';
import { basename, join } from 'node:path';
import type { SessionSource, SessionSummary } from './ports.ts';

export function fileSessionSource(dir: string, files: TextFiles): SessionSource {
  let byId = new Map<string, string>();
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
  return {
    async listSessions() {
      const listed = await files.list(dir);
      if (listed === undefined) throw new Error(`no session directory ${dir}`);
      const names = listed.filter((n) => n.endsWith('.json')).sort();
      const next = new Map<string, string>();
      const out: SessionSummary[] = [];
      for (const name of names) {
        const file = join(dir, name);
        let raw: unknown = null;
        try {
          raw = JSON.parse((await files.read(file)) ?? '');
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
      const text = await files.read(file);
      if (text === undefined) throw new Error('unknown session');
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return undefined; // unparseable → MALFORMED downstream
      }
    },
  };
}
