// The local stack's start deadline after an unclean stop: Neo4j recovering its transaction logs keeps the
// wait going while it progresses (scripts/stack.mjs, recoveryDeadline), and only then.
import { describe, expect, it } from 'vitest';
import { recoveryDeadline } from '../../scripts/stack.mjs';

const line = (time: string, text: string, logger = 'o.n.k.r.Recovery') =>
  `2026-12-07 ${time}.000+0000 INFO  [${logger}] [neo4j/3ddbb1bd] ${text}`;

const started = [
  line('16:54:30', 'Starting...', 'o.n.g.f.m.GlobalModule'),
  line('16:54:40', 'Recovery required from position LogPosition{logVersion=217}', 'o.n.k.d.Database'),
].join('\n');
const tenth = line('16:54:51', ' 10% completed');
const recovering = [started, line('16:54:41', 'TransactionLogsRecovery'), tenth].join('\n');

const T0 = 1_000_000;
const TIMEOUT = 120_000;
const fresh = { deadline: T0, last: '' };

describe('the start deadline of a recovering Neo4j', () => {
  it('does not move while debug.log shows no recovery line, whatever else it logs', () => {
    const wait = recoveryDeadline(fresh, started, T0 + 100_000, TIMEOUT);
    expect(wait).toEqual({ ...fresh, note: '' });
  });

  it('moves to a whole timeout after the newest recovery line, and names its progress', () => {
    const wait = recoveryDeadline(fresh, recovering, T0 + 100_000, TIMEOUT);
    expect(wait).toEqual({ deadline: T0 + 100_000 + TIMEOUT, last: tenth, note: '10% completed' });
  });

  it('does not move again until a further recovery line appears', () => {
    const first = recoveryDeadline(fresh, recovering, T0 + 100_000, TIMEOUT);
    const idle = recoveryDeadline(
      first,
      `${recovering}\n${line('16:55:00', 'other', 'o.n.k.a.Foo')}`,
      T0 + 200_000,
      TIMEOUT,
    );
    expect(idle.deadline).toBe(first.deadline);
    expect(idle.note).toBe('');
    const ninety = line('16:58:33', ' 90% completed');
    const next = recoveryDeadline(idle, `${recovering}\n${ninety}`, T0 + 200_000, TIMEOUT);
    expect(next).toEqual({ deadline: T0 + 200_000 + TIMEOUT, last: ninety, note: '90% completed' });
  });

  it('counts a line in a rotated debug.log that holds fewer recovery lines than before', () => {
    const first = recoveryDeadline(fresh, recovering, T0 + 100_000, TIMEOUT);
    const twenty = line('16:55:10', ' 20% completed');
    const next = recoveryDeadline(first, twenty, T0 + 150_000, TIMEOUT);
    expect(next).toEqual({ deadline: T0 + 150_000 + TIMEOUT, last: twenty, note: '20% completed' });
  });

  it('never shortens a deadline that is already later', () => {
    const wait = recoveryDeadline({ deadline: T0 + 500_000, last: '' }, recovering, T0, TIMEOUT);
    expect(wait.deadline).toBe(T0 + 500_000);
    expect(wait.last).toBe(tenth);
  });
});
