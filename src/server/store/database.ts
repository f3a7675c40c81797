// SPDX-License-Identifier: GPL-3.0-or-later
import { cpSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { PGlite } from '@electric-sql/pglite';

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
  transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T>;
  /**
   * A transaction for the node's liveness (the cluster heartbeat), on a connection no request
   * waits for (PostgreSQL); `transaction` where there is one connection anyway (embedded).
   */
  liveness?<T>(fn: (tx: Executor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Opens (creating on first use) the embedded database under `<dataDir>/db`.
 *
 * PGlite runs each statement synchronously, in this thread, and its promises resolve at once: a
 * queue of statements (a burst of creates, each a transaction of several) would run back to back
 * in one turn of the event loop, for hundreds of milliseconds, with every request and `/healthz`
 * waiting behind it (measured: bench/burst.bench.ts). So statements take turns (EventLoopTurns):
 * one statement or one transaction at a time, as PGlite's single connection runs them anyway,
 * single statements (a key's lookup) ahead of waiting transactions; once they have held the
 * event loop for EVENT_LOOP_SLICE_MS in one turn of it, the next statement waits for the next
 * turn (within a transaction, once they have held it for TRANSACTION_SLICE_MS). The database
 * then holds a turn for about a slice and one statement at most, or a transaction's share.
 */
export async function openEmbeddedDatabase(
  dataDir: string,
  options: { template?: string } = {},
): Promise<Database> {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, 'db');
  const copied = !existsSync(path) && copyTemplate(options.template, path);
  let pg: PGlite;
  try {
    pg = new PGlite(path);
    await pg.waitReady;
  } catch (err) {
    if (!copied) throw err;
    // A template this PGlite cannot open: the first start makes its own, as without one.
    rmSync(path, { recursive: true, force: true });
    pg = new PGlite(path);
    await pg.waitReady;
  }
  const turns = new EventLoopTurns();
  return {
    kind: 'embedded',
    query: <T>(sql: string, params: unknown[] = []) =>
      turns.take(async () => ({ rows: (await pg.query<T>(sql, params)).rows }), { first: true }),
    // A transaction's statements are timed one by one. It holds PGlite's one connection, so
    // while it waits for a turn every statement waits behind it: it goes on to a larger share.
    transaction: (fn) =>
      turns.take(
        () =>
          pg.transaction((tx) =>
            fn({
              query: async <T>(sql: string, params: unknown[] = []) => ({
                rows: (await turns.inTransaction(() => tx.query<T>(sql, params))).rows,
              }),
              exec: async (sql) => {
                await turns.inTransaction(() => tx.exec(sql));
              },
            }),
          ),
        { timed: false },
      ),
    exec: (sql) =>
      turns.take(async () => {
        await pg.exec(sql);
      }),
    close: () => turns.take(() => pg.close()),
  };
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

/**
 * Work that runs one piece at a time, holding the event loop for at most `sliceMs` (and one
 * piece) per turn of it: once the pieces run in a turn have taken that long, the next one waits
 * for the next turn, so that I/O, timers and other requests run in between. Only the pieces'
 * own time counts: a statement that comes in a turn busy with other work (a burst's requests
 * being read) runs at once while the database has not had its share of it.
 *
 * Pieces run in arrival order, except that a piece taken `first` (a single statement) goes ahead
 * of the waiting pieces that are not (transactions), FIRST_AHEAD_LIMIT in a row at most: in a
 * burst of creates, a key's lookup then waits for the transaction under way, not for every create
 * queued before it,
 * and the creates behind it are refused as soon as their key is known (createQueue.ts).
 * Callers that need an order await it, as they must with a pool of connections.
 */
export class EventLoopTurns {
  private readonly firstPieces: Piece[] = [];
  private readonly otherPieces: Piece[] = [];
  /** Pieces taken `first` in a row while others waited (see nextPiece). */
  private aheadInARow = 0;
  /** A piece is running, or the next one waits for the next turn. */
  private busy = false;
  /** Milliseconds the pieces have held the event loop in this turn of it. */
  private heldMs = 0;
  private turnWatched = false;

  constructor(
    private readonly sliceMs = EVENT_LOOP_SLICE_MS,
    private readonly transactionSliceMs = TRANSACTION_SLICE_MS,
  ) {}

  /**
   * Runs `work` when its turn comes. `timed`: its whole run counts as holding the loop (a
   * transaction times its statements itself, with `held`); `first`: ahead of waiting pieces
   * that are not.
   */
  take<T>(work: () => Promise<T>, { timed = true, first = false } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = (): Promise<T> => {
        try {
          return timed ? this.held(work) : work();
        } catch (err) {
          return Promise.reject(err); // thrown before its promise: the queue goes on all the same
        }
      };
      const piece: Piece = {
        run: () =>
          start().then(
            (value) => {
              this.finished();
              resolve(value);
            },
            (err: unknown) => {
              this.finished();
              reject(err);
            },
          ),
      };
      (first ? this.firstPieces : this.otherPieces).push(piece);
      if (!this.busy) this.next();
    });
  }

  /** Resolves at once while the pieces have had less than `sliceMs` of this turn. */
  private async yieldIfLong(sliceMs = this.sliceMs): Promise<void> {
    if (this.heldMs < sliceMs) return;
    await nextTurn();
  }

  /**
   * Runs one statement of the transaction under way (a piece taken untimed): it waits for a turn
   * only once the pieces have held this one for `transactionSliceMs`.
   */
  async inTransaction<T>(work: () => Promise<T>): Promise<T> {
    await this.yieldIfLong(this.transactionSliceMs);
    return this.held(work);
  }

  /** Runs one piece, counting its time against this turn's share. */
  async held<T>(work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.heldMs += performance.now() - started;
      if (!this.turnWatched) {
        this.turnWatched = true;
        setImmediate(() => {
          this.heldMs = 0;
          this.turnWatched = false;
        });
      }
    }
  }

  /**
   * Starts the next piece: now while the share of this turn lasts, else in the next turn (where
   * it runs whatever the share, so that a share of 0 still runs a piece per turn).
   */
  private next(afterYield = false): void {
    if (!afterYield && this.heldMs >= this.sliceMs) {
      this.busy = true;
      void nextTurn().then(() => this.next(true));
      return;
    }
    const piece = this.nextPiece();
    this.busy = piece !== undefined;
    void piece?.run();
  }

  /**
   * A piece taken `first` while any wait, but not more than FIRST_AHEAD_LIMIT in a row while
   * others wait: a flood of single statements (lookups of made-up secrets) cannot starve the
   * transactions.
   */
  private nextPiece(): Piece | undefined {
    if (this.otherPieces.length === 0) {
      this.aheadInARow = 0;
      return this.firstPieces.shift();
    }
    if (this.firstPieces.length > 0 && this.aheadInARow < FIRST_AHEAD_LIMIT) {
      this.aheadInARow++;
      return this.firstPieces.shift();
    }
    this.aheadInARow = 0;
    return this.otherPieces.shift();
  }

  /**
   * A piece ended: the next one starts before its caller hears of it, so that a caller who
   * awaited it and sends another piece at once finds the database free, not behind the queue.
   */
  private finished(): void {
    this.busy = false;
    if (this.firstPieces.length > 0 || this.otherPieces.length > 0) this.next();
  }
}

interface Piece {
  /** Runs the piece, then starts the next and settles its caller's promise; never rejects. */
  run(): Promise<void>;
}

/** How many single statements may go ahead of a waiting transaction in a row. */
export const FIRST_AHEAD_LIMIT = 16;

/** How long the embedded database's statements may hold the event loop before it yields. */
export const EVENT_LOOP_SLICE_MS = 10;

/**
 * The same within a transaction. While a transaction waits for a turn it holds PGlite's one
 * connection, and every statement waits behind it (in a burst of creates, the next key's lookup
 * waited 40 to 100 ms for a create's transaction of 8 statements, 10 ms of its own, that yielded
 * between them). A create's transaction (8 statements, 2 to 10 ms) runs whole; a long one still
 * lets the loop turn.
 */
export const TRANSACTION_SLICE_MS = 50;
