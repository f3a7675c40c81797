// SPDX-License-Identifier: GPL-3.0-or-later
import { cpSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { childScript, startWorkerThread } from '../../threads/childScript.js';
import { ThreadPool } from '../../threads/threadPool.js';
import {
  fromThreadError,
  type DatabaseTask,
  type DatabaseTaskResult,
  type DatabaseThreadData,
  type DatabaseThreadError,
} from './databaseThreadProtocol.js';
import { StatementQueue } from './statementQueue.js';
import {
  TransactionChannel,
  type ChannelAnswer,
  type ChannelRequest,
} from './transactionChannel.js';

/**
 * The narrow SQL surface the store needs. PGlite (embedded, WASM Postgres) implements it here;
 * a `pg` pool for `DATABASE_URL` implements the same surface with the same SQL
 * (postgresDatabase.ts).
 */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>;
}

/** A connection, or one transaction, that can also run a whole SQL script. */
export interface Executor extends Queryable {
  /**
   * Runs `sql` as one script with no parameters (PostgreSQL's simple query protocol): several
   * statements, `DO $$ … $$` blocks and functions alike, in the order written. `query` cannot:
   * with parameters both drivers prepare the text, and a prepared statement is one statement.
   */
  exec(sql: string): Promise<void>;
}

export interface Database extends Executor {
  /** `embedded`: PGlite in the data directory (one process); `postgres`: a shared server. */
  readonly kind: 'embedded' | 'postgres';
  /** Runs `fn` in one transaction; concurrent transactions are serialized. */
  transaction<T>(fn: (tx: Executor) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * A transaction for the node's liveness (the cluster heartbeat), on a connection no request
   * waits for (PostgreSQL); `transaction` where there is one connection anyway (embedded).
   */
  liveness?<T>(fn: (tx: Executor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface TransactionOptions {
  /**
   * Embedded: run only when no statement or transaction of a request waits, and never hold the
   * API's event loop for its answers (the node's warm-up, warmUp.ts). PostgreSQL: no effect.
   */
  idle?: boolean;
}

/**
 * Opens (creating on first use) the embedded database under `<dataDir>/db`.
 *
 * PGlite (PostgreSQL in WebAssembly) runs each statement synchronously in the thread that holds
 * it, so it runs on a worker thread of its own (databaseThread.ts): the API's thread posts
 * statements and reads rows, and a burst's statements (a create's check-and-insert is one
 * statement here, its avatar's lookup and key's lookup others) take none of its event loop (measured: bench/coldBurst.bench.ts). PGlite has one connection, so
 * statements and transactions run one at a time (StatementQueue), single statements (a key's
 * lookup) ahead of waiting transactions. A transaction is one task of the thread: BEGIN, its
 * statements through shared memory (TransactionChannel: a message's answer would wait for a turn
 * of the event loop, once per statement, while the transaction holds the connection), then
 * COMMIT, or ROLLBACK when a statement or the caller fails.
 *
 * The thread is ThreadPool's (one thread): a thread that dies fails the statement under way with
 * a connection failure (SQLSTATE 08006, so that requests answer 503 `database_unavailable`), and
 * the next statement starts a fresh thread on the same data directory. An idle thread does not
 * keep the process alive.
 */
export async function openEmbeddedDatabase(
  dataDir: string,
  options: { template?: string } = {},
): Promise<Database> {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, 'db');
  // Only the first thread may replace a template it cannot open; a restart reopens what is there.
  let fromTemplate = !existsSync(path) && copyTemplate(options.template, path);
  /** Threads started so far: a transaction is lost with the thread it began on. */
  let threadsStarted = 0;
  const channel = new TransactionChannel();
  const pgliteWasmModule = await compiledPglite();
  const pool = new ThreadPool<DatabaseTask, DatabaseTaskResult, DatabaseThreadError, unknown>({
    startThread: () => {
      const workerData: DatabaseThreadData = {
        path,
        fromTemplate,
        channel: channel.buffer,
        pgliteWasmModule,
      };
      fromTemplate = false;
      threadsStarted++;
      const script = childScript(
        import.meta.url,
        './databaseThread.ts',
        'databaseThread',
        'caller',
        'server',
      );
      return startWorkerThread(script, {}, workerData);
    },
    errors: {
      fromThread: fromThreadError,
      timeout: (limitMs) => new Error(`the embedded database took over ${limitMs} ms`),
      crashed: (error) => threadLost(`died: ${error.message}`, error),
      exited: (code) => threadLost(`exited (code ${code})`),
      closed: () => new Error('the embedded database is closed'),
      busy: () => new Error('the embedded database is busy'),
    },
  });
  let closed = false;
  const run = (
    task: DatabaseTask,
    onPart?: (part: unknown) => void,
  ): Promise<DatabaseTaskResult> =>
    closed ? Promise.reject(new Error('the embedded database is closed')) : pool.run(task, onPart);
  const query = async <T>(sql: string, params: unknown[]) =>
    ({ rows: (await run({ op: 'query', sql, params: params.map(crossing) }))!.rows }) as {
      rows: T[];
    };
  const exec = async (sql: string) => {
    await run({ op: 'exec', sql });
  };
  try {
    await run({ op: 'open' });
  } catch (err) {
    await pool.close();
    throw err;
  }
  const queue = new StatementQueue();
  return {
    kind: 'embedded',
    query: <T>(sql: string, params: unknown[] = []) =>
      queue.take(() => query<T>(sql, params), { first: true }),
    transaction: (fn, { idle = false } = {}) =>
      queue.take(
        async () => {
          const answersAsMessages: ChannelAnswer[] = [];
          let answerAsMessage: (() => void) | undefined;
          const task = run({ op: 'transaction', from: channel.sent }, (answer) => {
            answersAsMessages.push(answer as ChannelAnswer);
            answerAsMessage?.();
          });
          // The task ends with the transaction (its COMMIT's outcome), or early with its thread.
          task.catch(() => undefined);
          const taskEnded = task.then(
            () => Promise.reject(threadLost('ended the transaction early')),
            (err: unknown) => Promise.reject(err),
          );
          taskEnded.catch(() => undefined);
          const thread = threadsStarted;
          let ended = false;
          let sleepLeftMs = idle ? 0 : TRANSACTION_SLEEP_MS;
          const ask = async (request: ChannelRequest): Promise<ChannelAnswer> => {
            if (ended) throw new Error('the transaction has ended');
            if (thread !== threadsStarted) throw threadLost('was replaced during the transaction');
            const n = channel.send(request);
            const asleep = performance.now();
            let reply = channel.answerWithin(n, sleepLeftMs);
            sleepLeftMs -= performance.now() - asleep;
            reply ??= await Promise.race([channel.answer(n), taskEnded]);
            if ('asMessage' in reply) {
              reply = await Promise.race([
                new Promise<ChannelAnswer>((resolve) => {
                  const take = () => {
                    answerAsMessage = undefined;
                    resolve(answersAsMessages.shift()!);
                  };
                  if (answersAsMessages.length > 0) take();
                  else answerAsMessage = take;
                }),
                taskEnded,
              ]);
            }
            if ('error' in reply) throw fromThreadError(reply.error);
            return reply;
          };
          const end = async (commit: boolean) => {
            ended = true;
            channel.send({ op: 'end', commit });
            await task;
          };
          try {
            const result = await fn({
              query: async <T>(sql: string, params: unknown[] = []) => {
                const answer = await ask({ op: 'query', sql, params: params.map(crossing) });
                return { rows: (answer as { rows: T[] }).rows };
              },
              exec: async (sql) => {
                await ask({ op: 'exec', sql });
              },
            });
            await end(true);
            return result;
          } catch (err) {
            // After a failed COMMIT PostgreSQL has rolled back already, and the task has ended.
            if (!ended) await end(false).catch(() => undefined);
            throw err;
          }
        },
        { idle },
      ),
    exec: (sql) => queue.take(() => exec(sql)),
    close: () =>
      queue.take(async () => {
        if (closed) return;
        try {
          if (pool.threadCount > 0) await run({ op: 'close' });
        } finally {
          closed = true;
          await pool.close();
        }
      }),
  };
}

/**
 * How long the API's thread may sleep, in all, for one transaction's answers before it waits for
 * them without blocking its event loop (a short transaction's statements take a few ms; a long
 * transaction, a migration, goes on asynchronously). The old in-thread turns let a transaction
 * hold the loop for 50 ms, and this holds it less: asleep, the API's thread leaves its core to
 * the database's.
 */
export const TRANSACTION_SLEEP_MS = 50;

/**
 * A parameter as it should cross to the thread: a Buffer (or any Uint8Array) as a copy of its
 * own bytes, since structured clone would copy the whole buffer it is a view of (a pooled
 * Buffer's 8 KiB) and PGlite takes bytea as a Uint8Array anyway.
 */
function crossing(param: unknown): unknown {
  return param instanceof Uint8Array ? new Uint8Array(param) : param;
}

/**
 * The database's thread died or exited under a statement: the statement fails as on a lost
 * connection to a server (SQLSTATE 08006 connection_failure; see databaseUnavailable.ts), and the
 * next one starts a fresh thread (a transaction under way fails whole: PostgreSQL never saw its
 * COMMIT).
 */
function threadLost(what: string, cause?: Error): Error {
  return Object.assign(new Error(`the embedded database's thread ${what}`, { cause }), {
    code: '08006',
  });
}

let pgliteWasm: Promise<WebAssembly.Module> | undefined;

/**
 * PGlite's WebAssembly (`pglite.wasm`, 9 MB, beside its entry), compiled once per process and
 * handed to every database thread: each thread compiled it again otherwise (a test process opens
 * dozens of databases).
 */
function compiledPglite(): Promise<WebAssembly.Module> {
  pgliteWasm ??= readFile(new URL('pglite.wasm', import.meta.resolve('@electric-sql/pglite'))).then(
    (bytes) => WebAssembly.compile(bytes),
  );
  return pgliteWasm;
}

/**
 * Copies a template data directory (see databaseTemplate.ts) to `path`, through a scratch name so
 * that a start killed half-way leaves no half database behind. False when there is none.
 */
function copyTemplate(template: string | undefined, path: string): boolean {
  if (!template || !existsSync(join(template, 'PG_VERSION'))) return false;
  const scratch = `${path}.copying`;
  rmSync(scratch, { recursive: true, force: true });
  cpSync(template, scratch, { recursive: true });
  renameSync(scratch, path);
  return true;
}
