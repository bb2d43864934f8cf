import { createRequire } from 'node:module';
import { dirname } from 'node:path';

/**
 * Why this exists: the driver packs each Bolt message into a 1,400-byte buffer and hands the socket a
 * write every time the buffer fills. A 384-float vector packs to ~3.5 KB, so a relate lookup carrying its
 * query vector cost three writes, and a projector batch of records with their embeddings hundreds. On this
 * machine a write to the loopback socket costs the API's event loop about 0.1 ms, mostly per call (the kernel
 * delivers it to Neo4j inside the call), and those writes were 12 % of `muninn serve`'s samples in the
 * write benchmark; with 16 KiB chunks, 9 % (one profile each). A message of up to 16 KiB now goes out in
 * one write. Server CPU per write moved within the run-to-run spread (five alternated pairs of
 * bench:ledger with hashing: 2.62–3.14 ms against 2.73–3.33).
 *
 * The driver offers no setting for it (neo4j-driver 6.3.0 builds `new Chunker(channel)` with its default),
 * so the driver's own Chunker is replaced by a subclass that passes a larger size. A Bolt chunk's length
 * is 16 bits: 16 KiB stays far inside it. Should an upgrade move or rename the class, nothing is replaced
 * and the driver works as shipped: `widenBoltChunks` says which (test/contract/bolt-chunks.test.ts fails).
 */
export const BOLT_CHUNK_BYTES = 16 * 1024;

type ChunkerClass = new (channel: unknown, bufferSize?: number) => object;
interface ChunkingModule {
  Chunker: ChunkerClass & { readonly widened?: number };
}

let done: boolean | undefined;

/** Makes every connection opened after this call chunk at `BOLT_CHUNK_BYTES`; true when it took effect. */
export function widenBoltChunks(): boolean {
  if (done !== undefined) return done;
  done = false;
  const chunking = chunkingModule();
  if (!chunking || typeof chunking.Chunker !== 'function') return false;
  const Original: ChunkerClass = chunking.Chunker;
  class WideChunker extends Original {
    static readonly widened = BOLT_CHUNK_BYTES;
    constructor(channel: unknown, bufferSize?: number) {
      super(channel, bufferSize ?? BOLT_CHUNK_BYTES);
    }
  }
  chunking.Chunker = WideChunker;
  done = true;
  return true;
}

/** The driver's chunking module, the one instance its connections use (null when it is not there). */
export function chunkingModule(): ChunkingModule | null {
  try {
    const fromHere = createRequire(import.meta.url);
    const driverDir = dirname(fromHere.resolve('neo4j-driver/package.json'));
    const fromDriver = createRequire(`${driverDir}/`);
    return fromDriver('neo4j-driver-bolt-connection/lib/channel/chunking.js') as ChunkingModule;
  } catch {
    return null;
  }
}
