// The local set-up shared by `npm start`, `npm test` and the benchmarks: the checksum-pinned embedding model
// MUNINN_LOCAL_MODEL names (bge-small-en-v1.5 by default), and all-MiniLM-L6-v2 in any case (the tests that
// pin cosines and the issue #10 baseline use it),
// and, unless NEO4J_URI and KAFKA_BROKERS are both set, the local Neo4j and Kafka. Sets the two variables
// and returns the stack handle (its stop() stops only what this call started), or undefined.
import { ensureModel, MINILM, modelFromEnv } from './fetch-model.mjs';
import { ensureStack } from './stack.mjs';

export async function ensureLocalEnv() {
  await ensureModel({ model: MINILM });
  if (modelFromEnv() !== MINILM) await ensureModel({ model: modelFromEnv() });
  if (process.env.NEO4J_URI && process.env.KAFKA_BROKERS) return undefined;
  const stack = await ensureStack();
  process.env.NEO4J_URI = stack.neo4jUri;
  process.env.KAFKA_BROKERS = stack.kafkaBrokers;
  return stack;
}
