import type { Kafka, Producer, ProducerRecord, RecordMetadata } from 'kafkajs';
import { partitioner } from './wire.ts';

/**
 * The ledger's one producer, connected on first use and retired by a send that fails.
 *
 * Why retire it: KafkaJS gives a failed send's sequence numbers back, so the producer's next send would
 * carry the same ones. If the failed send had reached the log before its answer was lost (a broker
 * killed mid-request), the broker takes that next batch for a duplicate of the stored one, drops it and
 * answers with the stored batch's offsets: acknowledged appends lost (test/int/ledger-answer-lost.test.ts
 * makes that happen on a real broker).
 * A new producer gets a new producer id, whose sequences start afresh.
 */
export class ProducerSlot {
  private current: Promise<Producer> | undefined;

  constructor(private readonly make: () => Producer) {}

  async send(record: ProducerRecord): Promise<RecordMetadata[]> {
    const ready = this.connected();
    const producer = await ready;
    try {
      return await producer.send(record);
    } catch (e) {
      if (this.current === ready) {
        this.current = undefined;
        void producer.disconnect().catch(() => undefined);
      }
      throw e;
    }
  }

  async close(): Promise<void> {
    const ready = this.current;
    this.current = undefined;
    await ready?.then((p) => p.disconnect()).catch(() => undefined);
  }

  private connected(): Promise<Producer> {
    if (!this.current) {
      const producer = this.make();
      const ready = producer.connect().then(
        () => producer,
        (e: unknown) => {
          if (this.current === ready) this.current = undefined;
          throw e;
        },
      );
      this.current = ready;
    }
    return this.current;
  }
}

/** The ledger's producer: idempotent with one request in flight, no topic auto-creation, our partitioner. */
export function ledgerProducer(kafka: Kafka): Producer {
  return kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner:
      () =>
      ({ message, partitionMetadata }) =>
        partitioner(partitionMetadata.length)(String(message.key)),
  });
}
