import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { BOLT_CHUNK_BYTES, chunkingModule } from '../../src/adapters/neo4j/bolt-chunks.ts';
import { CypherExecutor } from '../../src/adapters/neo4j/executor.ts';
import { testConfig } from '../support/harness.ts';

/**
 * The executor's connections chunk Bolt messages at 16 KiB, not the driver's 1,400 bytes
 * (src/adapters/neo4j/bolt-chunks.ts). Against the real Neo4j: a statement whose parameters pack to
 * ~8 KB goes to the socket as one write, and Neo4j reads the wider chunks, and messages split across
 * several of them, back to the same values.
 */

const c = testConfig().neo4j;
const db = CypherExecutor.connect(c.uri, c.user, c.password, c.database);
afterAll(() => db.close());

/** The socket writes made while `fn` runs (nothing else in this file runs meanwhile). */
async function socketWrites<T>(fn: () => Promise<T>): Promise<{ writes: number; value: T }> {
  const original = net.Socket.prototype.write;
  let writes = 0;
  net.Socket.prototype.write = function (this: net.Socket, ...args: unknown[]) {
    writes++;
    return (original as (...a: unknown[]) => boolean).apply(this, args);
  } as typeof original;
  try {
    const value = await fn();
    return { writes, value };
  } finally {
    net.Socket.prototype.write = original;
  }
}

const floats = (n: number) => Array.from({ length: n }, (_, i) => (i % 97) / 97 + 0.5);
const sumOf = (v: number[]) => v.reduce((a, b) => a + b, 0);

describe('Bolt chunks', () => {
  it("replaces the driver's Chunker with one of 16 KiB", () => {
    expect((chunkingModule()?.Chunker as { widened?: number } | undefined)?.widened).toBe(BOLT_CHUNK_BYTES);
  });

  it('sends a read with a 1,000-float parameter (~9 KB) in one socket write, and Neo4j reads it whole', async () => {
    await db.read('bolt.warm', 'RETURN 1 AS one'); // the connection's handshake is not the statement's
    const v = floats(1_000);
    const { writes, value } = await socketWrites(() =>
      db.read<{ n: number; s: number }>(
        'bolt.wide',
        'RETURN size($v) AS n, reduce(s = 0.0, x IN $v | s + x) AS s',
        { v },
      ),
    );
    expect(writes).toBe(1); // 1,400-byte chunks took 7
    expect(value.records[0]!.get('n')).toBe(1_000);
    expect(value.records[0]!.get('s')).toBeCloseTo(sumOf(v), 6);
  });

  it('splits a message larger than one chunk (5,000 floats, ~45 KB) into chunks Neo4j reassembles', async () => {
    const v = floats(5_000);
    const { writes, value } = await socketWrites(() =>
      db.read<{ n: number; s: number; last: number }>(
        'bolt.split',
        'RETURN size($v) AS n, reduce(s = 0.0, x IN $v | s + x) AS s, $v[-1] AS last',
        { v },
      ),
    );
    expect(writes).toBe(Math.ceil((5_000 * 9) / BOLT_CHUNK_BYTES));
    expect(value.records[0]!.get('n')).toBe(5_000);
    expect(value.records[0]!.get('s')).toBeCloseTo(sumOf(v), 6);
    expect(value.records[0]!.get('last')).toBe(v[4_999]);
  });
});
