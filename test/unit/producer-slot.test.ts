import type { Producer, ProducerRecord } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { ProducerSlot } from '../../src/adapters/kafka/producer.ts';

/** A stand-in producer that records what happens to it; `fail` makes its next send (or connect) throw. */
function fakes() {
  const made: Array<{
    id: number;
    sends: number;
    disconnected: boolean;
    failSend: boolean;
    failConnect: boolean;
  }> = [];
  const next = { failConnect: false };
  const make = (): Producer => {
    const me = {
      id: made.length + 1,
      sends: 0,
      disconnected: false,
      failSend: false,
      failConnect: next.failConnect,
    };
    next.failConnect = false;
    made.push(me);
    return {
      connect: async () => {
        if (me.failConnect) throw new Error(`producer ${me.id} could not connect`);
      },
      send: async (_r: ProducerRecord) => {
        me.sends++;
        if (me.failSend) throw new Error(`send on producer ${me.id} failed`);
        return [{ topicName: 't', partition: 0, errorCode: 0, baseOffset: String(me.sends) }];
      },
      disconnect: async () => {
        me.disconnected = true;
      },
    } as unknown as Producer;
  };
  return { made, next, make };
}

const record: ProducerRecord = { topic: 't', messages: [{ value: 'x' }] };

describe('ProducerSlot', () => {
  it('sends on one producer while its sends succeed', async () => {
    const f = fakes();
    const slot = new ProducerSlot(f.make);
    await slot.send(record);
    await slot.send(record);
    expect(f.made.map((p) => p.sends)).toEqual([2]);
  });

  it('a failed send retires its producer: the next send goes out on a new one', async () => {
    const f = fakes();
    const slot = new ProducerSlot(f.make);
    await slot.send(record);
    f.made[0]!.failSend = true;
    await expect(slot.send(record)).rejects.toThrow('send on producer 1 failed');
    await slot.send(record);
    expect(f.made.map((p) => ({ id: p.id, sends: p.sends, disconnected: p.disconnected }))).toEqual([
      { id: 1, sends: 2, disconnected: true },
      { id: 2, sends: 1, disconnected: false },
    ]);
  });

  it('sends already on their way when one fails retire the producer once', async () => {
    const f = fakes();
    const slot = new ProducerSlot(f.make);
    await slot.send(record);
    f.made[0]!.failSend = true;
    const both = await Promise.allSettled([slot.send(record), slot.send(record)]);
    expect(both.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    await slot.send(record);
    await slot.send(record);
    expect(f.made.map((p) => p.sends)).toEqual([3, 2]);
  });

  it('a producer that could not connect is made again on the next send', async () => {
    const f = fakes();
    f.next.failConnect = true;
    const slot = new ProducerSlot(f.make);
    await expect(slot.send(record)).rejects.toThrow('producer 1 could not connect');
    await slot.send(record);
    expect(f.made.map((p) => p.sends)).toEqual([0, 1]);
  });

  it('close disconnects the current producer; a later send makes a new one', async () => {
    const f = fakes();
    const slot = new ProducerSlot(f.make);
    await slot.send(record);
    await slot.close();
    expect(f.made[0]!.disconnected).toBe(true);
    await slot.send(record);
    expect(f.made).toHaveLength(2);
  });
});
