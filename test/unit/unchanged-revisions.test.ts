import { describe, expect, it } from 'vitest';
import {
  decideFeedback,
  decidePropose,
  decideRevise,
  parseCommand,
  ProposeCommand,
  ReviseCommand,
} from '../../src/domain/commands.ts';
import type { RecordState } from '../../src/domain/fold.ts';
import { MemoryState } from '../../src/domain/memory-state.ts';
import { decideContext } from '../support/decide-context.ts';

/**
 * The projector writes only the revisions a batch changed (MemoryState.changes → unchangedRevisions): a
 * record loaded with its revisions and then reinforced, given feedback or revised keeps the untouched ones
 * out of the write. A record the batch created has every revision written.
 */

const ctx = decideContext();
let n = 0;
const NS = 'acme/platform';

function proposed(): RecordState {
  const cmd = parseCommand(ProposeCommand, {
    namespace: NS,
    class: 'FACT',
    statement: { subject: 'api', predicate: 'uses', object: 'postgres', text: 'The API uses Postgres.' },
    purpose: 'test',
    idempotencyKey: `k-${++n}`,
  });
  const state = new MemoryState();
  for (const e of decidePropose(ctx, cmd, [], 'ACTIVE')) state.apply(e);
  return state.changes().records[0]!;
}

const revise = (r: RecordState, expectedVersion: number, object: string) =>
  decideRevise(
    ctx,
    parseCommand(ReviseCommand, {
      id: r.id,
      expectedVersion,
      statement: { subject: 'api', predicate: 'uses', object, text: `The API uses ${object}.` },
      purpose: 'test',
      idempotencyKey: `k-${++n}`,
    }),
    NS,
  );

/** Loads `r` as the graph would hand it over, applies `events`, returns what the write would leave out. */
function unchangedAfter(r: RecordState, events: ReturnType<typeof revise>[]) {
  const state = new MemoryState({ records: [r] });
  for (const e of events) state.apply(e);
  const c = state.changes();
  const written = c.records.find((x) => x.id === r.id)!;
  return { written, unchanged: c.unchangedRevisions.get(written) };
}

describe('the revisions a batch leaves as loaded', () => {
  it('a record the batch created is written whole', () => {
    const state = new MemoryState();
    const cmd = parseCommand(ProposeCommand, {
      namespace: NS,
      class: 'FACT',
      statement: { subject: 'db', predicate: 'is', object: 'pg', text: 'The database is Postgres.' },
      purpose: 'test',
      idempotencyKey: `k-${++n}`,
    });
    for (const e of decidePropose(ctx, cmd, [], 'ACTIVE')) state.apply(e);
    const c = state.changes();
    expect(c.records).toHaveLength(1);
    expect(c.unchangedRevisions.size).toBe(0);
  });

  it('feedback changes the record, not its revision: the revision is left out', () => {
    const r = proposed();
    const fb = decideFeedback(ctx, { recallId: 'rc-1', handle: 'h', verdict: 'USED' }, r.id, NS);
    const { written, unchanged } = unchangedAfter(r, [fb]);
    expect(written.feedback.used).toBe(1);
    expect([...(unchanged ?? [])]).toEqual([1]);
  });

  it('a revise leaves the revisions before the one it retires, and writes that one and the new', () => {
    const r1 = proposed();
    const r2 = unchangedAfter(r1, [revise(r1, 1, 'mysql')]);
    // The first revise retired version 1 and added 2: both written.
    expect(r2.written.revisions.map((v) => v.version)).toEqual([1, 2]);
    expect(r2.unchanged).toBeUndefined();
    const r3 = unchangedAfter(r2.written, [revise(r2.written, 2, 'sqlite')]);
    expect(r3.written.revisions.map((v) => v.version)).toEqual([1, 2, 3]);
    expect([...(r3.unchanged ?? [])]).toEqual([1]);
  });

  it('an equal copy of a loaded revision (as read back from the graph) counts as unchanged', () => {
    const r = proposed();
    const copy: RecordState = { ...r, revisions: r.revisions.map((v) => structuredClone(v)) };
    const fb = decideFeedback(ctx, { recallId: 'rc-2', handle: 'h', verdict: 'USED' }, r.id, NS);
    expect([...(unchangedAfter(copy, [fb]).unchanged ?? [])]).toEqual([1]);
  });
});
