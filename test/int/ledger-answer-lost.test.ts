import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { Kafka, logLevel, type ISocketFactory, type Producer, type ProducerRecord } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { ledgerProducer, ProducerSlot } from '../../src/adapters/kafka/producer.ts';
import { endpoints, ledgerOnFreshTopic } from '../support/harness.ts';

/**
 * A send the broker stored but whose answer never came back, on a real broker. The client's sockets do
 * it: once armed, the broker's answer to the next produce request is swallowed and its connection cut,
 * and new connections are refused until the producer gives up, so the send fails to its caller while its
 * batch is on the topic. The send after it must be stored and acknowledged at its own offsets.
 *
 * KafkaJS gives a failed send's sequence numbers back. Reusing the producer, the next batch carries the
 * stored one's numbers: the broker drops it for a duplicate and acknowledges it with the stored batch's
 * offsets (the first test shows the hazard, so the second proves something). The ledger's ProducerSlot
 * (src/adapters/kafka/producer.ts) retires a producer after a failed send.
 */
class AnswerLoss {
  armed = false;
  refusing = false;

  readonly socketFactory: ISocketFactory = ({ host, port, onConnect }) => {
    if (this.refusing) {
      const refused = new net.Socket();
      setImmediate(() =>
        refused.destroy(Object.assign(new Error('connect ECONNREFUSED (test)'), { code: 'ECONNREFUSED' })),
      );
      return refused;
    }
    const socket = net.connect({ host, port }, onConnect);
    let target: number | null = null;
    let pending = Buffer.alloc(0);
    const write = socket.write.bind(socket) as (chunk: unknown, ...rest: unknown[]) => boolean;
    // A request is [int32 size][int16 apiKey][int16 apiVersion][int32 correlationId]…; Produce is apiKey 0.
    socket.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (this.armed && Buffer.isBuffer(chunk) && chunk.length >= 12 && chunk.readInt16BE(4) === 0) {
        this.armed = false;
        target = chunk.readInt32BE(8);
      }
      return write(chunk, ...rest);
    }) as typeof socket.write;
    const emit = socket.emit.bind(socket) as (event: string | symbol, ...args: unknown[]) => boolean;
    // An answer is [int32 size][int32 correlationId]…: pass every frame on but the produce request's.
    socket.emit = ((event: string | symbol, ...args: unknown[]) => {
      if (event !== 'data' || target === null) return emit(event, ...args);
      pending = Buffer.concat([pending, args[0] as Buffer]);
      while (pending.length >= 8 && pending.length >= 4 + pending.readInt32BE(0)) {
        const frame = pending.subarray(0, 4 + pending.readInt32BE(0));
        pending = pending.subarray(frame.length);
        if (frame.readInt32BE(4) === target) {
          this.refusing = true;
          socket.destroy(new Error('connection lost with the answer (test)'));
          return true;
        }
        emit('data', frame);
      }
      return true;
    }) as typeof socket.emit;
    return socket;
  };
}

const { topic, adapters } = ledgerOnFreshTopic('answer-lost');

const batch = (name: string): ProducerRecord => ({
  topic,
  acks: -1,
  messages: [1, 2].map((i) => ({ key: 'tenant', value: `${name}-${i}` })),
});

/** What each of three sends was acknowledged with, and what the topic holds at those offsets. */
async function scenario(
  send: (r: ProducerRecord) => Promise<Array<{ baseOffset?: string }>>,
  loss: AnswerLoss,
) {
  const base = async (name: string) => BigInt((await send(batch(name)))[0]!.baseOffset!);
  await base(`before-${randomUUID()}`); // a batch stored and answered: the producer has its id and sequence
  loss.armed = true;
  const lost = `lost-${randomUUID()}`;
  await expect(send(batch(lost))).rejects.toThrow();
  loss.refusing = false;
  const after = `after-${randomUUID()}`;
  const at = await base(after);
  const stored = new Map<bigint, string>();
  await adapters.ledger.readAll(async (b) => {
    for (const m of b.messages) stored.set(BigInt(m.offset), Buffer.from(m.value ?? []).toString('utf8'));
  }, 500);
  const values = [...stored.values()];
  return {
    lostStored: values.filter((v) => v.startsWith(lost)).length,
    after,
    afterStored: values.filter((v) => v.startsWith(after)).length,
    atAcknowledged: [stored.get(at), stored.get(at + 1n)],
  };
}

function client(loss: AnswerLoss): Kafka {
  return new Kafka({
    clientId: 'answer-lost-test',
    brokers: endpoints().KAFKA_BROKERS.split(','),
    logLevel: logLevel.NOTHING,
    socketFactory: loss.socketFactory,
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 300 },
  });
}

describe('a send the broker stored whose answer was lost', () => {
  it('reusing the producer (the hazard): the next send is acknowledged at the lost batch’s offsets and not stored', async () => {
    const loss = new AnswerLoss();
    const producer: Producer = ledgerProducer(client(loss));
    await producer.connect();
    try {
      const r = await scenario((rec) => producer.send(rec), loss);
      expect(r.lostStored).toBe(2);
      expect(r.afterStored).toBe(0);
      expect(r.atAcknowledged.every((v) => v?.startsWith('lost-'))).toBe(true);
    } finally {
      await producer.disconnect();
    }
  });

  it('the ledger’s ProducerSlot: the next send is stored, at the offsets it was acknowledged with', async () => {
    const loss = new AnswerLoss();
    const kafka = client(loss);
    const slot = new ProducerSlot(() => ledgerProducer(kafka));
    try {
      const r = await scenario((rec) => slot.send(rec), loss);
      expect(r.lostStored).toBe(2);
      expect(r.afterStored).toBe(2);
      expect(r.atAcknowledged).toEqual([`${r.after}-1`, `${r.after}-2`]);
    } finally {
      await slot.close();
    }
  });
});
