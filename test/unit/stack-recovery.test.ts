// The local stack's start deadline after an unclean stop: Neo4j recovering its transaction logs, or Kafka
// loading its partitions' logs, keeps the wait going while it progresses (scripts/stack.mjs,
// recoveryDeadline), and only then.
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

const kafkaLine = (n: number, of: number, topic = 'muninn.ledger') =>
  `2026-12-07 22:09:51.838 [log-recovery-/work/.stack/data/kafka-0] INFO kafka.log.LogManager - Completed ` +
  `load of Log(dir=/work/.stack/data/kafka/${topic}-0, topic=${topic}, partition=0, highWatermark=0, ` +
  `logEndOffset=3468) with 1 segments, local-log-start-offset 0 and log-end-offset 3468 in 2ms ` +
  `(${n}/${of} completed in /work/.stack/data/kafka)`;
const unflushed =
  '2026-12-07 22:09:51.839 [log-recovery-/work/.stack/data/kafka-0] INFO kafka.log.LogLoader - ' +
  '[LogLoader partition=muninn.ledger-2, dir=/work/.stack/data/kafka] Recovering unflushed segment 0. ' +
  '0/1 recovered for muninn.ledger-2.';

describe('the start deadline of a Kafka loading its logs', () => {
  it('moves to a whole timeout after the newest loaded log, and names how many of all are loaded', () => {
    const text = [kafkaLine(1, 676), unflushed, kafkaLine(2, 676)].join('\n');
    const wait = recoveryDeadline(fresh, text, T0 + 100_000, TIMEOUT, 'kafka');
    expect(wait).toEqual({ deadline: T0 + 100_000 + TIMEOUT, last: kafkaLine(2, 676), note: '2/676 loaded' });
  });

  it('moves on as it leads its partitions and loads its consumer offsets, after the logs', () => {
    const led =
      '2026-12-07 22:11:21.771 [kafka-1-metadata-loader-event-handler] INFO kafka.cluster.Partition - ' +
      '[Partition muninn.ledger-0 broker=1] Log loaded for partition muninn.ledger-0 with initial high watermark 0';
    const offsets =
      '2026-12-07 22:11:22.628 [group-metadata-manager-0] INFO kafka.coordinator.group.GroupMetadataManager - ' +
      '[GroupMetadataManager brokerId=1] Finished loading offsets and group metadata from __consumer_offsets-7 ' +
      'in 3 milliseconds for epoch 0, of which 1 milliseconds was spent in the scheduler.';
    const first = recoveryDeadline(fresh, `${kafkaLine(676, 676)}\n${led}`, T0 + 10_000, TIMEOUT, 'kafka');
    expect(first).toEqual({ deadline: T0 + 10_000 + TIMEOUT, last: led, note: 'leading its partitions' });
    const next = recoveryDeadline(first, `${led}\n${offsets}`, T0 + 20_000, TIMEOUT, 'kafka');
    expect(next).toEqual({ deadline: T0 + 20_000 + TIMEOUT, last: offsets, note: 'consumer offsets' });
  });

  it("does not move on lines that are not a loaded log, nor on Neo4j's recovery lines", () => {
    const wait = recoveryDeadline(fresh, `${unflushed}\n${recovering}`, T0 + 100_000, TIMEOUT, 'kafka');
    expect(wait).toEqual({ ...fresh, note: '' });
  });

  it("leaves a Neo4j start's deadline alone on Kafka's lines", () => {
    const wait = recoveryDeadline(fresh, kafkaLine(5, 676), T0 + 100_000, TIMEOUT, 'neo4j');
    expect(wait).toEqual({ ...fresh, note: '' });
  });
});
