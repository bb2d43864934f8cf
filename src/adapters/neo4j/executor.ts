import neo4j, {
  type Driver,
  type Record as Neo4jRecord,
  type ManagedTransaction,
  type QueryResult,
  type RecordShape,
} from 'neo4j-driver';
import { MuninnError, isMuninnError } from '../../domain/errors.ts';
import { RelationTypes } from '../../domain/model.ts';
import { widenBoltChunks } from './bolt-chunks.ts';

/**
 * The one Cypher executor. Every statement goes through here: routed read or write, tagged with the
 * operation name (visible in Neo4j's query log and `SHOW TRANSACTIONS`), values always as parameters,
 * and driver errors mapped to typed MuninnErrors.
 */
export type Params = Record<string, unknown>;

export interface Tx {
  run<R extends RecordShape = RecordShape>(cypher: string, params?: Params): Promise<QueryResult<R>>;
}

/** One statement as it ran: benchmarks PROFILE exactly what the product sends (see recall.bench.ts). */
export interface StatementRun {
  readonly op: string;
  readonly cypher: string;
  readonly params: Params;
  readonly ms: number;
  readonly rows: number;
}

export class CypherExecutor {
  /** Sees every statement after it ran (diagnostics only; unset in the service). */
  observer: ((run: StatementRun) => void) | undefined;

  /** `holdDriver`: the pool `hold` takes its connections from (the statements' own one unless given). */
  constructor(
    private readonly driver: Driver,
    private readonly database: string,
    private readonly holdDriver: Driver = driver,
  ) {}

  /**
   * `trustedCaFile`: TLS trusting only the CA in this PEM file (a private CA, with a bolt:// or neo4j://
   * URI); without it the URI's scheme decides (+s: system CAs, +ssc: any certificate).
   */
  static connect(
    uri: string,
    user: string,
    password: string,
    database: string,
    trustedCaFile?: string,
  ): CypherExecutor {
    const auth = password ? neo4j.auth.basic(user, password) : undefined;
    const tls = trustedCaFile
      ? {
          encrypted: 'ENCRYPTION_ON' as const,
          trust: 'TRUST_CUSTOM_CA_SIGNED_CERTIFICATES' as const,
          trustedCertificates: [trustedCaFile],
        }
      : {};
    widenBoltChunks(); // one socket write per message of up to 16 KiB, not one per 1,400 bytes
    const pool = (maxConnectionPoolSize: number) =>
      neo4j.driver(uri, auth, {
        ...tls,
        disableLosslessIntegers: true,
        maxConnectionPoolSize,
        connectionAcquisitionTimeout: 30_000,
        logging: { level: 'error', logger: () => undefined },
      });
    // Holds keep a connection while a write waits for its projection: a pool of their own, so they never
    // take one the statements need (a driver opens no connection until one is asked for).
    return new CypherExecutor(pool(50), database, pool(CypherExecutor.HOLDS_MAX));
  }

  /** The most locks held at once (connections in the holds' pool); Neo4j's Bolt threads default to 400. */
  static readonly HOLDS_MAX = 200;

  /**
   * One read statement as an auto-commit transaction: RUN and PULL in one round trip, where a managed
   * transaction adds BEGIN and COMMIT (p50 1.2 against 3.2 ms on loopback here, and a recall or a write
   * runs several reads in turn). Retried on transient errors for up to READ_RETRY_MS, as the driver
   * retries a managed one; a read has no effects, so running it again is always safe.
   */
  async read<R extends RecordShape = RecordShape>(
    op: string,
    cypher: string,
    params: Params = {},
  ): Promise<QueryResult<R>> {
    const started = performance.now();
    for (let attempt = 1; ; attempt++) {
      const session = this.driver.session({ database: this.database, defaultAccessMode: neo4j.session.READ });
      try {
        return await this.observed(op, cypher, params, () =>
          unstacked(() =>
            session.run<R>({ text: cypher, parameters: params }, { metadata: { op }, timeout: 120_000 }),
          ),
        );
      } catch (e) {
        if (!neo4j.isRetryableError(e) || performance.now() - started > CypherExecutor.READ_RETRY_MS)
          throw mapError(e, op);
      } finally {
        await session.close();
      }
      await new Promise((r) => setTimeout(r, Math.min(1_000, 50 * 2 ** attempt)));
    }
  }

  /** How long a failing read is retried (the driver's default for managed transactions). */
  static readonly READ_RETRY_MS = 30_000;

  /**
   * One read statement whose rows are handed to `onRow` as they arrive, a fetch batch at a time, and
   * never held together: for a dump of the whole graph (the state hash), which buffered in one result
   * exceeded the heap at ~135k records here. Not retried (a retry would hand rows over twice); returns
   * how many rows there were.
   */
  async stream(
    op: string,
    cypher: string,
    params: Params,
    onRow: (row: Neo4jRecord) => void,
  ): Promise<number> {
    const session = this.driver.session({ database: this.database, defaultAccessMode: neo4j.session.READ });
    let rows = 0;
    try {
      const result = session.run(
        { text: cypher, parameters: params },
        { metadata: { op }, timeout: 600_000 },
      );
      for await (const row of result) {
        onRow(row);
        rows++;
      }
      return rows;
    } catch (e) {
      throw mapError(e, op);
    } finally {
      await session.close();
    }
  }

  async write<R extends RecordShape = RecordShape>(
    op: string,
    cypher: string,
    params: Params = {},
  ): Promise<QueryResult<R>> {
    return this.writeTx(op, (tx) => tx.run<R>(cypher, params));
  }

  async readTx<T>(op: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.session('READ', op, fn);
  }

  /** A managed write transaction: retried on transient errors, so `fn` must be repeatable. */
  async writeTx<T>(op: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.session('WRITE', op, fn);
  }

  /**
   * One statement that takes write locks so as to read past transactions still being applied, in a
   * transaction that is then rolled back: what it wrote is never stored and nothing reaches the log. Why:
   * Neo4j applies a committed transaction while others read, and releases that transaction's locks only
   * once it is applied, so a statement that first locks a node (a property of its own, set then removed)
   * reads what the last holder of that lock left, whole. Not retried: its callers poll.
   */
  async lockedRead<R extends RecordShape = RecordShape>(
    op: string,
    cypher: string,
    params: Params = {},
  ): Promise<QueryResult<R>> {
    const session = this.driver.session({ database: this.database, defaultAccessMode: neo4j.session.WRITE });
    try {
      const tx = session.beginTransaction({ metadata: { op }, timeout: 120_000 });
      try {
        return await this.observed(op, cypher, params, () => unstacked(() => tx.run<R>(cypher, params)));
      } finally {
        await tx.rollback().catch(() => undefined);
      }
    } catch (e) {
      throw mapError(e, op);
    } finally {
      await session.close();
    }
  }

  /** Schema statements (migrations) cannot share a transaction with data writes. */
  async autoCommit(op: string, cypher: string, params: Params = {}): Promise<void> {
    const session = this.driver.session({ database: this.database, defaultAccessMode: neo4j.session.WRITE });
    try {
      await session.run({ text: cypher, parameters: params }, { metadata: { op } });
    } catch (e) {
      throw mapError(e, op);
    } finally {
      await session.close();
    }
  }

  /**
   * Write locks held past one statement: `cypher` runs in an explicit transaction that is never committed,
   * so what it wrote is never stored and the locks it took are held until `release()` rolls it back, the
   * connection drops (a killed process) or `holdMs` passes (Neo4j's own transaction timeout). Waiting for a
   * lock another transaction holds ends after `waitMs`: closing the session stops the wait on the server
   * (LockClientStopped) and null is returned.
   */
  async hold(
    op: string,
    cypher: string,
    params: Params,
    waitMs: number,
    holdMs: number,
  ): Promise<Hold | null> {
    const session = this.holdDriver.session({
      database: this.database,
      defaultAccessMode: neo4j.session.WRITE,
    });
    const close = () => session.close().catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    try {
      const tx = session.beginTransaction({ metadata: { op }, timeout: waitMs + holdMs });
      const ran = Promise.resolve(unstacked(() => tx.run(cypher, params))).then(() => true);
      ran.catch(() => undefined); // after a timeout the stopped wait rejects; nobody waits for it then
      const waited = new Promise<false>((res) => (timer = setTimeout(() => res(false), waitMs)));
      const t0 = performance.now();
      const got = await Promise.race([ran, waited]);
      this.observer?.({ op, cypher, params, ms: performance.now() - t0, rows: got ? 1 : 0 });
      if (!got) {
        await close();
        return null;
      }
      let released = false;
      return {
        release: () => {
          if (released) return;
          released = true;
          void tx
            .rollback()
            .catch(() => undefined)
            .finally(close);
        },
      };
    } catch (e) {
      await close();
      throw mapError(e, op);
    } finally {
      clearTimeout(timer);
    }
  }

  async ping(): Promise<void> {
    try {
      await this.driver.getServerInfo({ database: this.database });
    } catch (e) {
      throw mapError(e, 'ping');
    }
  }

  async close(): Promise<void> {
    await this.driver.close();
    if (this.holdDriver !== this.driver) await this.holdDriver.close();
  }

  private async observed<R extends RecordShape>(
    op: string,
    cypher: string,
    params: Params,
    run: () => Promise<QueryResult<R>>,
  ): Promise<QueryResult<R>> {
    const observer = this.observer;
    if (!observer) return run();
    const t0 = performance.now();
    const res = await run();
    observer({ op, cypher, params, ms: performance.now() - t0, rows: res.records.length });
    return res;
  }

  private async session<T>(mode: 'READ' | 'WRITE', op: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
    const session = this.driver.session({
      database: this.database,
      defaultAccessMode: mode === 'READ' ? neo4j.session.READ : neo4j.session.WRITE,
    });
    const run = <R extends RecordShape>(mtx: ManagedTransaction, cypher: string, params: Params) =>
      this.observed(op, cypher, params, () => unstacked(() => mtx.run<R>(cypher, params)));
    const work = (mtx: ManagedTransaction): Promise<T> =>
      fn({
        run: <R extends RecordShape>(cypher: string, params: Params = {}) => run<R>(mtx, cypher, params),
      });
    const config = { metadata: { op }, timeout: 120_000 };
    try {
      return mode === 'READ'
        ? await session.executeRead(work, config)
        : await session.executeWrite(work, config);
    } catch (e) {
      throw mapError(e, op);
    } finally {
      await session.close();
    }
  }
}

/**
 * Starts a driver call without the stack trace the driver captures for every result (its Result
 * constructor formats `new Error().stack`, source-mapped under tsx). That was ~10 % of the API thread's
 * time in the write benchmark (bench:ledger, 64 callers: 1.5 of 17.6 s). A failed statement is still
 * named by its op in the mapped error and in logs; only the driver's JavaScript call site is lost.
 * Restored before anything else can run: the driver builds the result synchronously.
 */
function unstacked<T>(start: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return start();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * Driver error → MuninnError. Never leaks Cypher or values to the caller; the cause keeps them for logs.
 * UNAVAILABLE (retryable) is everything that says nothing about the statement: what the driver itself
 * would retry, and a pool that found no free connection in time (the driver gives that one no code). Why
 * it matters: the projector retries UNAVAILABLE, but sets the events of any other failure aside to the
 * dead-letter topic, out of the graph.
 */
export function mapError(e: unknown, op: string): MuninnError {
  if (isMuninnError(e)) return e;
  const code = (e as { code?: unknown }).code;
  const c = typeof code === 'string' ? code : '';
  const message = e instanceof Error ? e.message : '';
  // The driver's own test covers ServiceUnavailable, SessionExpired and every Neo.TransientError.
  if (neo4j.isRetryableError(e) || message.startsWith('Connection acquisition timed out')) {
    return new MuninnError('UNAVAILABLE', `graph store unavailable (${op})`, {}, { cause: e });
  }
  if (c === 'Neo.ClientError.Schema.ConstraintValidationFailed') {
    return new MuninnError('CONFLICT', `graph constraint violated (${op})`, {}, { cause: e });
  }
  return new MuninnError('INTERNAL', `graph store error (${op})`, {}, { cause: e });
}

/** Labels and relationship types that may ever be interpolated into Cypher. Everything else is a parameter. */
export const ALLOWED_LABELS = new Set([
  'Record',
  'Revision',
  'Entity',
  'Receipt',
  'Checkpoint',
  'Migration',
  'Episode',
  'Chunk',
  'Grant',
  'HandoffState',
  'TokenUse',
  'TestDatabase',
]);
export function label(name: string): string {
  if (!ALLOWED_LABELS.has(name)) throw new MuninnError('INTERNAL', `label not allow-listed: ${name}`);
  return name;
}

/** The closed relation set of the domain, plus the graph's own structural edge. */
export const ALLOWED_REL_TYPES: ReadonlySet<string> = new Set<string>(['HAS_REVISION', ...RelationTypes]);
export function relType(name: string): string {
  if (!ALLOWED_REL_TYPES.has(name))
    throw new MuninnError('INTERNAL', `relationship type not allow-listed: ${name}`);
  return name;
}

/** Locks taken by `hold`, until released. */
export interface Hold {
  release(): void;
}

/** What the graph adapters use of the executor (a recording fake implements it in test/cypher). */
export type Executor = Pick<
  CypherExecutor,
  'read' | 'stream' | 'write' | 'readTx' | 'writeTx' | 'autoCommit' | 'lockedRead' | 'hold' | 'ping' | 'close'
>;
