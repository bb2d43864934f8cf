import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import type { TestApp } from './harness.ts';

/**
 * Where a leaked secret would be found: everything the graph holds and every byte a ledger topic holds.
 * The tests search these for raw secrets (which are generated per run, so a hit can only come from it).
 */

/**
 * Which of `needles` occur in the graph: every property of every node and relationship, as JSON text — but
 * the embedding vectors (numbers cannot hold a secret, and they are most of a record's bytes). Read and
 * searched a page at a time (by element id), and never joined: a graph holding a benchmark's 100k records
 * beside the test's own (a developer's machine) made the whole result in one read exceed the test worker's
 * heap, and later the joined text exceed the longest string V8 makes. A needle lies within one property,
 * so within one row. `chars`: how much text was searched.
 */
export async function graphSearch(
  app: TestApp,
  needles: readonly string[],
): Promise<{ chars: number; found: string[] }> {
  const found = new Set<string>();
  let chars = 0;
  for (const [match, labels] of [
    ['MATCH (x)', 'labels(x)'],
    ['MATCH ()-[x]->()', '[type(x)]'],
  ] as const) {
    for (let after = ''; ;) {
      const page = await app.m.store.db.read(
        'test.dump',
        `${match} WHERE elementId(x) > $after
         WITH x ORDER BY elementId(x) LIMIT 20000
         RETURN elementId(x) AS id, ${labels} AS l, [k IN keys(x) WHERE k <> 'embedding' | [k, x[k]]] AS p`,
        { after },
      );
      if (page.records.length === 0) break;
      for (const r of page.records) {
        const row = JSON.stringify([r.get('l'), r.get('p')]);
        chars += row.length;
        for (const n of needles) if (row.includes(n)) found.add(n);
      }
      after = String(page.records.at(-1)!.get('id'));
    }
  }
  return { chars, found: needles.filter((n) => found.has(n)) };
}

/** Key, value and headers of every message of `topic`, read raw from the broker, one message a line. */
export async function rawTopic(brokers: readonly string[], topic: string): Promise<string> {
  const kafka = new Kafka({ clientId: 'test-dump', brokers: brokers.slice(), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const total = offsets.reduce((s, o) => s + Number(o.high) - Number(o.low), 0);
  if (total === 0) return '';
  const consumer = kafka.consumer({ groupId: `dump-${randomUUID()}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const raw: string[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`read ${raw.length}/${total} messages`)), 30_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          const headers = Object.entries(message.headers ?? {}).map(([k, v]) => `${k}=${String(v)}`);
          raw.push(
            `${message.key?.toString() ?? ''} ${message.value?.toString() ?? ''} ${headers.join(' ')}`,
          );
          if (raw.length >= total) {
            clearTimeout(t);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return raw.join('\n');
}

/**
 * Every event of the app's ledger as the projector reads it: sealed personal fields opened under their
 * data keys (issue 13), one JSON event a line. `types` keeps only those event types when given.
 */
export async function openedLedger(app: TestApp, types?: readonly string[]): Promise<string> {
  const opened: string[] = [];
  await app.m.ledger.readAll(async (b) => {
    for (const m of b.messages) {
      const d = m.value ? await app.m.decode(m.value) : null;
      if (d?.ok && (!types || types.includes(d.event.type))) opened.push(JSON.stringify(d.event));
    }
  }, 500);
  return opened.join('\n');
}
