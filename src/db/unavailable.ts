// The one place that recognises "the database cannot answer right now" among the drivers' errors, and
// the Kysely dialect wrapper that turns them into core's DatabaseUnavailable on every query, transaction
// and connection checkout (hot-reads.ts wraps its own direct reads with `mapUnavailable`).
import type { DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from 'kysely';
import { DatabaseUnavailable } from '../core/errors.js';

// PostgreSQL SQLSTATEs: 57014 query_canceled (statement_timeout), 57P01 admin_shutdown, 57P02
// crash_shutdown, 57P03 cannot_connect_now (starting up, shutting down), 53300 too_many_connections,
// class 08 connection exceptions
const PG_UNAVAILABLE = /^(57014|57P0[123]|53300|08...)$/;
// socket errors of pg's connection and the host lookup
const NODE_UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  // over a Unix socket: the socket file is gone while PostgreSQL is stopped
  'ENOENT',
]);
// pg and pg-pool say it in words only: a connect timeout, a pool checkout timeout, the client-side
// query_timeout, a connection that ended under a query, a client already broken
const PG_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Client was closed and is not queryable)/;

export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof DatabaseUnavailable) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    // better-sqlite3: SQLITE_BUSY (and its extended codes) once busy_timeout has passed
    if (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_')) return true;
    if (PG_UNAVAILABLE.test(code) || NODE_UNAVAILABLE.has(code)) return true;
  }
  return PG_MESSAGES.test(error.message);
}

/** `error` as DatabaseUnavailable when it says the database cannot answer, else unchanged. */
export function mapUnavailable(error: unknown): unknown {
  if (error instanceof DatabaseUnavailable || !isDatabaseUnavailable(error)) return error;
  return new DatabaseUnavailable(`database unavailable: ${(error as Error).message}`, { cause: error });
}

/** For `.catch(rethrow)`: a driver's "unavailable" error rethrown as DatabaseUnavailable, others unchanged. */
export const rethrow = (error: unknown): never => {
  throw mapUnavailable(error);
};

/**
 * `work()` with a driver's "unavailable" error rethrown as DatabaseUnavailable, whether it rejects or
 * throws synchronously (Kysely's SQLite connection throws better-sqlite3's errors before any promise).
 */
async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    return rethrow(error);
  }
}

class MappedConnection implements DatabaseConnection {
  constructor(readonly inner: DatabaseConnection) {}
  executeQuery<R>(query: Parameters<DatabaseConnection['executeQuery']>[0]): Promise<QueryResult<R>> {
    return mapped(() => this.inner.executeQuery<R>(query));
  }
  streamQuery<R>(query: Parameters<DatabaseConnection['streamQuery']>[0], chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

const unwrap = (connection: DatabaseConnection) => (connection instanceof MappedConnection ? connection.inner : connection);

class MappedDriver implements Driver {
  constructor(private readonly inner: Driver) {}
  init = () => mapped(() => this.inner.init());
  acquireConnection = async () => new MappedConnection(await mapped(() => this.inner.acquireConnection()));
  beginTransaction = (c: DatabaseConnection, settings: TransactionSettings) =>
    mapped(() => this.inner.beginTransaction(unwrap(c), settings));
  commitTransaction = (c: DatabaseConnection) => mapped(() => this.inner.commitTransaction(unwrap(c)));
  rollbackTransaction = (c: DatabaseConnection) => mapped(() => this.inner.rollbackTransaction(unwrap(c)));
  releaseConnection = (c: DatabaseConnection) => this.inner.releaseConnection(unwrap(c));
  destroy = () => this.inner.destroy();
}

/** The dialect with every driver error that means "unavailable" rethrown as DatabaseUnavailable. */
export function mappingUnavailable(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new MappedDriver(dialect.createDriver()),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}
