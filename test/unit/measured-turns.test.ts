import { describe, expect, it } from 'vitest';
import type { SubjectTurns } from '../../src/ports/ingest-lookups.ts';
import { measuredTurns, noTelemetry } from '../../src/ports/telemetry.ts';

/** The subject turns' waits reach telemetry with their outcome: what an operator sees of replica contention. */
describe('measuredTurns', () => {
  it('reports a turn taken and a wait given up, each with how long it waited', async () => {
    const seen: Array<[string, number]> = [];
    const telemetry = { ...noTelemetry, subjectTurn: (o: string, s: number) => void seen.push([o, s]) };
    const turns: SubjectTurns = {
      hold: async (keys, waitMs) => {
        await new Promise((r) => setTimeout(r, waitMs));
        return keys[0] === 'free' ? { release: () => undefined } : null;
      },
    };
    const measured = measuredTurns(turns, telemetry);
    expect(await measured.hold(['free'], 20, 1_000)).not.toBeNull();
    expect(await measured.hold(['held'], 30, 1_000)).toBeNull();
    expect(seen.map(([o]) => o)).toEqual(['taken', 'given_up']);
    expect(seen[0]![1]).toBeGreaterThanOrEqual(0.015);
    expect(seen[1]![1]).toBeGreaterThanOrEqual(0.025);
  });
});
