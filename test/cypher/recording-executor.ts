import type { Executor, Params, Tx } from '../../src/adapters/neo4j/executor.ts';

/** One statement as a role object sent it. */
export interface Sent {
  readonly op: string;
  readonly cypher: string;
  readonly params: Params;
}

type Row = Record<string, unknown>;
/** Rows to answer a statement with, by op (the fake never evaluates Cypher: this tier tests query text). */
export type Answers = Partial<Record<string, Row[]>>;

const record = (row: Row) => ({
  get: (k: string) => row[k],
  toObject: () => row,
  keys: Object.keys(row),
});

/**
 * The executor's interface, recording every statement and answering from `answers` (empty otherwise).
 * Legitimate here only: the cypher tier asserts what a read sends, never what a database returns.
 */
export function recordingExecutor(answers: Answers = {}): Executor & { sent: Sent[] } {
  const sent: Sent[] = [];
  const run = (op: string, cypher: string, params: Params = {}) => {
    sent.push({ op, cypher, params });
    return Promise.resolve({ records: (answers[op] ?? []).map(record) } as never);
  };
  const tx = (op: string): Tx => ({ run: (cypher: string, params?: Params) => run(op, cypher, params) });
  return {
    sent,
    read: run,
    stream: async (op, cypher, params, onRow) => {
      const rows = (await run(op, cypher, params)) as unknown as { records: Parameters<typeof onRow>[0][] };
      rows.records.forEach(onRow);
      return rows.records.length;
    },
    write: run,
    readTx: (op, fn) => fn(tx(op)),
    lockedRead: run,
    writeTx: (op, fn) => fn(tx(op)),
    autoCommit: async (op, cypher, params) => {
      await run(op, cypher, params);
    },
    hold: async (op, cypher, params) => {
      await run(op, cypher, params);
      return { release: () => void sent.push({ op: `${op}.release`, cypher: 'ROLLBACK', params: {} }) };
    },
    ping: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
}
