// SPDX-License-Identifier: GPL-3.0-or-later
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Database, Executor } from './database.js';
import { DatabaseUnavailableError, isConnectionFailure } from './databaseUnavailable.js';

/**
 * How long a connection attempt to PostgreSQL may take (a request then fails with
 * database_unavailable; the notification listener retries).
 */
export const POSTGRES_CONNECT_TIMEOUT_MS = 5_000;

/**
 * node-postgres, loaded when a node uses PostgreSQL: a node on its embedded database (`visage
 * dev`) does not pay for loading it at start-up.
 */
export async function nodePostgres(): Promise<typeof pg> {
  return (await import('pg')).default;
}

function unavailableOr(err: unknown): unknown {
  return isConnectionFailure(err) ? new DatabaseUnavailableError(err) : err;
}

/**
 * A PostgreSQL server (`DATABASE_URL`) through a node-postgres pool. Connections that drop are
 * discarded and replaced on the next query, so the node recovers by itself when the server is
 * back; meanwhile every query fails fast with DatabaseUnavailableError.
 */
export async function openPostgresDatabase(url: string, log?: Logger): Promise<Database> {
  const Pool = (await nodePostgres()).Pool;
  const openPool = (max: number) => {
    const p = new Pool({
      connectionString: url,
      max,
      connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
      idleTimeoutMillis: 30_000,
      // TCP keep-alive: a server that vanished without closing is noticed on idle connections too.
      keepAlive: true,
    });
    // An idle connection that the server drops must not crash the process: the pool removes it.
    p.on('error', (err) => log?.warn({ err: err.message }, 'database connection lost'));
    // Nor one dropped as it is handed out. pg-pool takes its listener off a connection when it
    // hands it out, and a FATAL read together with a new connection's ReadyForQuery (a server
    // stopping, on a busy machine) is emitted in that same turn, before whoever asked for the
    // connection could listen: a listener of its own for its whole life. The failure is still
    // told, by the query that then fails or by the pool's 'error' once the connection is idle.
    p.on('connect', (client) => client.on('error', () => undefined));
    return p;
  };
  const pool = openPool(10);
  // The node's liveness (its cluster heartbeat) on a connection of its own: 300 creates at once
  // on one key queue on the key's row, each holding one of the pool's connections, and a
  // heartbeat queued behind them went unsent for over 10 s on a loaded machine: the other nodes
  // declared this one lost and ended its sessions.
  const livenessPool = openPool(1);
  const query = async <T>(client: pg.Pool | pg.PoolClient, sql: string, params: unknown[] = []) => {
    try {
      const r = await client.query(sql, params);
      return { rows: r.rows as T[] };
    } catch (err) {
      throw unavailableOr(err);
    }
  };
  // Fail at start-up, not at the first request, when the URL is wrong or the server is down.
  await query(pool, 'SELECT 1');
  const transactionOn =
    (on: pg.Pool) =>
    async <T>(fn: (tx: Executor) => Promise<T>): Promise<T> => {
      let client: pg.PoolClient;
      try {
        client = await on.connect();
      } catch (err) {
        throw unavailableOr(err);
      }
      let broken: unknown;
      // pg-pool listens for errors on idle connections only. One the server drops while this
      // transaction holds it between two queries emits 'error' here: without a listener that
      // is thrown from the socket and crashes the process. The next query then fails.
      const lost = (err: Error) => (broken = err);
      client.on('error', lost);
      const tx: Executor = {
        query: (sql, params) => query(client, sql, params),
        // No parameters: node-postgres sends the simple query protocol, which runs a script.
        exec: async (sql) => {
          await query(client, sql);
        },
      };
      try {
        await tx.query('BEGIN');
        const result = await fn(tx);
        await tx.query('COMMIT');
        return result;
      } catch (err) {
        if (err instanceof DatabaseUnavailableError) broken = err;
        else await client.query('ROLLBACK').catch((e: unknown) => (broken = e));
        throw err;
      } finally {
        // A connection that failed mid-transaction is destroyed, not reused.
        client.off('error', lost);
        client.release(broken instanceof Error ? broken : undefined);
      }
    };
  return {
    kind: 'postgres',
    query: (sql, params) => query(pool, sql, params),
    transaction: transactionOn(pool),
    liveness: transactionOn(livenessPool),
    exec: async (sql) => {
      await query(pool, sql);
    },
    close: async () => {
      await Promise.all([pool.end(), livenessPool.end()]);
    },
  };
}
