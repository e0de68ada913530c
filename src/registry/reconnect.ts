/**
 * PostgreSQL connections that go away (a database restart, a failover, an idle-connection reaper):
 * a query that fails because its connection was lost is run once more on a fresh connection, unless
 * it was part of a transaction (which went with the connection); if that fails too, the caller gets
 * TemporarilyUnavailable (503 with Retry-After over HTTP). The pool makes new connections as requests
 * come, so the server recovers by itself when the database is back.
 */
import type pg from 'pg';
import type { CompiledQuery, PostgresPool, PostgresPoolClient, DatabaseConnection, Driver, QueryResult, TransactionSettings } from 'kysely';
import { PostgresDialect } from './kysely.js';
import { TemporarilyUnavailable } from '../unavailable.js';

/** SQLSTATE classes and codes, and socket errors, that mean the connection itself is gone. */
const LOST_CODES = new Set(['57P01', '57P02', '57P03', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND']);
const LOST_MESSAGES = /Connection terminated|connection error and is not queryable|not queryable|timeout exceeded when trying to connect|Connection ended/i;

export function isConnectionLost(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (LOST_CODES.has(code) || code.startsWith('08'))) return true;
  return typeof message === 'string' && LOST_MESSAGES.test(message);
}

function unavailable(cause: unknown): TemporarilyUnavailable {
  const error = new TemporarilyUnavailable('the registry database cannot be reached right now; try again shortly');
  error.cause = cause;
  return error;
}

/**
 * The pool as Kysely sees it, handing out only clients connected after the last lost connection seen:
 * a database restart or a reaper ends every connection at once, and the idle ones do not know it yet
 * (the server's goodbye reaches a client before its socket closes), so a retry gets a fresh one.
 * A client whose query lost its connection is destroyed when released, not put back.
 */
export function poolDroppingLostClients(pool: pg.Pool): PostgresPool {
  const connectedAt = new WeakMap<pg.PoolClient | pg.Client, number>();
  pool.on('connect', (client) => connectedAt.set(client, performance.now()));
  let lastLoss = -Infinity;
  return {
    end: () => pool.end(),
    async connect(): Promise<PostgresPoolClient> {
      let client = await pool.connect();
      while ((connectedAt.get(client) ?? -Infinity) <= lastLoss) {
        client.release(true);
        client = await pool.connect();
      }
      let lost = false;
      return {
        query(...args: unknown[]): any {
          const result = (client.query as (...a: unknown[]) => unknown)(...args);
          if (result instanceof Promise) {
            result.catch((e) => {
              if (!isConnectionLost(e)) return;
              lost = true;
              lastLoss = performance.now();
            });
          }
          return result;
        },
        release: () => client.release(lost),
      } as PostgresPoolClient;
    },
  };
}

/** A connection that can be swapped for a fresh one when its own is lost between transactions. */
class ReconnectingConnection implements DatabaseConnection {
  inTransaction = false;
  /** False once `inner` went back to the pool and no fresh one could be had. */
  holdsInner = true;

  constructor(
    public inner: DatabaseConnection,
    private readonly driver: Driver,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await this.inner.executeQuery<R>(query);
    } catch (error) {
      if (!isConnectionLost(error)) throw error;
      if (this.inTransaction) throw unavailable(error);
      this.holdsInner = false;
      await this.driver.releaseConnection(this.inner); // the pool drops a client that is no longer queryable
      try {
        this.inner = await this.driver.acquireConnection();
        this.holdsInner = true;
        return await this.inner.executeQuery<R>(query);
      } catch (again) {
        throw isConnectionLost(again) ? unavailable(again) : again;
      }
    }
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(query, chunkSize);
    } catch (error) {
      throw isConnectionLost(error) ? unavailable(error) : error;
    }
  }
}

class ReconnectingDriver implements Driver {
  constructor(private readonly inner: Driver) {}

  init = () => this.inner.init();
  destroy = () => this.inner.destroy();

  async acquireConnection(): Promise<DatabaseConnection> {
    try {
      return new ReconnectingConnection(await this.inner.acquireConnection(), this.inner);
    } catch (error) {
      throw isConnectionLost(error) ? unavailable(error) : error;
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const wrapper = connection as ReconnectingConnection;
    if (wrapper.holdsInner) await this.inner.releaseConnection(wrapper.inner);
  }

  // Transaction statements run through the wrapper, so that a lost BEGIN is retried and anything after it is not.
  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await this.inner.beginTransaction(connection, settings);
    (connection as ReconnectingConnection).inTransaction = true;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await this.inner.commitTransaction(connection);
    } finally {
      (connection as ReconnectingConnection).inTransaction = false;
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await this.inner.rollbackTransaction(connection);
    } finally {
      (connection as ReconnectingConnection).inTransaction = false;
    }
  }

  savepoint: Driver['savepoint'] = (connection, name, compile) => this.inner.savepoint!(connection, name, compile);
  rollbackToSavepoint: Driver['rollbackToSavepoint'] = (connection, name, compile) => this.inner.rollbackToSavepoint!(connection, name, compile);
  releaseSavepoint: Driver['releaseSavepoint'] = (connection, name, compile) => this.inner.releaseSavepoint!(connection, name, compile);
}

/** Kysely's PostgreSQL dialect, with lost connections retried once or reported as TemporarilyUnavailable. */
export class ReconnectingPostgresDialect extends PostgresDialect {
  override createDriver(): Driver {
    return new ReconnectingDriver(super.createDriver());
  }
}
