/**
 * ObservationStore over one JSON file. Written atomically (private temp → fsync → rename → fsync dir): a crash
 * leaves the old or the new state, never a torn one. A file that does not parse fails the run (fail closed)
 * rather than silently restarting observation counts. The file holds only pseudonymous keys and fingerprints.
 */
import type { TextFiles } from '../ports/text-files.ts';
import { z } from 'zod';
import type { ObservationState, ObservationStore } from './ports.ts';

const RecordSchema = z.object({
  candidate: z
    .object({ fingerprint: z.string(), count: z.number().int().min(1), firstObservedAt: z.string() })
    .nullable(),
  watermark: z.object({ messageRef: z.string(), at: z.string() }).nullable(),
  publishedFingerprint: z.string().nullable(),
  lastObservedAt: z.string(),
});
const StateSchema = z.object({
  version: z.literal(1),
  keyId: z.string(),
  sessions: z.record(z.string(), RecordSchema),
});

export function fileObservationStore(path: string, files: TextFiles): ObservationStore {
  return {
    async load() {
      const text = await files.read(path);
      if (text === undefined) return null;
      const parsed = StateSchema.safeParse(JSON.parse(text));
      if (!parsed.success) throw new Error(`observation state at ${path} is invalid`);
      return parsed.data;
    },
    async save(state: ObservationState) {
      await files.write(path, JSON.stringify(state), { fileMode: 0o600, dirMode: 0o700 });
    },
  };
}

/** In-memory store for tests and dry runs. */
export function memoryObservationStore(initial: ObservationState | null = null): ObservationStore & {
  current(): ObservationState | null;
} {
  let state = initial ? structuredClone(initial) : null;
  return {
    load: () => Promise.resolve(state ? structuredClone(state) : null),
    save: (s) => {
      state = structuredClone(s);
      return Promise.resolve();
    },
    current: () => state,
  };
}
