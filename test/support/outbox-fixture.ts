import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { nodeTextFiles } from '../../src/adapters/files/text-files.ts';
import { fileObservationStore } from '../../src/handoff/observation-file.ts';
import type { SessionSource } from '../../src/handoff/ports.ts';
import { containsSecret } from '../../src/ingest/screen.ts';
import { exportOnce } from './outbox-dir.ts';

/** Synthetic transcript windows in an outbox, for the handoff tests (seed 000: no private data). */
const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'hermes');
const KEY = { keyId: 'k-e2e', secret: Buffer.alloc(32, 9) };
/** Text every published window carries: what "no transcript text here" looks for. */
export const TRANSCRIPT_TEXTS = ['SYNTH-HANDOFF-USER-TEXT', 'SYNTH-HANDOFF-ASSISTANT-TEXT'] as const;

/** N allowlisted, quiet, complete sessions built from the stable fixture, each with its own text. */
async function sessions(n: number, tag: string): Promise<SessionSource> {
  const base = JSON.parse(await readFile(join(FIXTURES, 'signal-stable.json'), 'utf8')) as {
    id: string;
    messages: Array<{ role: string; content: string | null }>;
  };
  const [user, assistant] = TRANSCRIPT_TEXTS;
  const all = Array.from({ length: n }, (_, i) => {
    const s = structuredClone(base);
    s.id = `sess-${tag}-${i}`;
    for (const m of s.messages) {
      if (m.role === 'user') m.content = `${user} ${tag}-${i}: we decided the garden gets tomatoes.`;
      if (m.role === 'assistant' && m.content) m.content = `${assistant} ${tag}-${i}: noted, tomatoes it is.`;
    }
    return s as unknown as Record<string, unknown>;
  });
  return {
    listSessions: async () =>
      all.map((s) => ({
        id: String(s['id']),
        source: 'signal',
        owner: 'owner-alice',
        revision: String(s['revision']),
      })),
    getSession: async (id) => structuredClone(all.find((s) => s['id'] === id)),
  };
}

/**
 * Two exporter runs (first observation, then the unchanged second) into `outbox`: one window, and one
 * manifest, per session. `stateDir` keeps the exporter's observations.
 */
export async function publishWindows(
  outbox: string,
  stateDir: string,
  n: number,
  tag: string,
): Promise<void> {
  const source = await sessions(n, tag);
  const store = fileObservationStore(join(stateDir, `state-${tag}.json`), nodeTextFiles);
  const cfg = {
    outboxDir: outbox,
    allowlist: [{ source: 'signal', owner: 'owner-alice' }],
    quietPeriodMs: 0,
    selectedWebUiSessions: [],
  };
  const deps = { source, store, clock: { now: () => new Date() }, detectSecret: containsSecret, key: KEY };
  expect((await exportOnce(deps, cfg)).published).toBe(0);
  expect((await exportOnce(deps, cfg)).published).toBe(n);
}
