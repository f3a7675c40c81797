import { mkdirSync } from 'node:fs';
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
  close(): Promise<void>;
}

/**
 * Opens (creating on first use) the embedded database under `<dataDir>/db`.
 *
 * PGlite runs each statement synchronously, in this thread, and its promises resolve at once: a
 * queue of statements (a burst of creates, each a transaction of several) would run back to back
 * in one turn of the event loop, for hundreds of milliseconds, with every request and `/healthz`
 * waiting behind it (measured: bench/burst.bench.ts). So statements take turns (EventLoopTurns):
 * one statement or one transaction at a time, as PGlite's single connection runs them anyway;
 * once they have held the event loop for EVENT_LOOP_SLICE_MS in one turn of it, the next
 * statement (also within a transaction) waits for the next turn. The database then holds a turn
 * for about a slice and one statement at most.
 */
export async function openEmbeddedDatabase(dataDir: string): Promise<Database> {
  mkdirSync(dataDir, { recursive: true });
  const pg = new PGlite(join(dataDir, 'db'));
  await pg.waitReady;
  const turns = new EventLoopTurns();
  return {
    kind: 'embedded',
    query: <T>(sql: string, params: unknown[] = []) =>
      turns.take(async () => ({ rows: (await pg.query<T>(sql, params)).rows })),
    // A transaction's statements are timed one by one (it may wait for turns between them).
    transaction: (fn) =>
      turns.take(
        () =>
          pg.transaction((tx) =>
            fn({
              query: async <T>(sql: string, params: unknown[] = []) => {
                await turns.yieldIfLong();
                return { rows: (await turns.held(() => tx.query<T>(sql, params))).rows };
              },
              exec: async (sql) => {
                await turns.yieldIfLong();
                await turns.held(() => tx.exec(sql));
              },
            }),
          ),
        false,
      ),
    exec: (sql) =>
      turns.take(async () => {
        await pg.exec(sql);
      }),
    close: () => turns.take(() => pg.close()),
  };
}

/**
 * Work that runs one piece at a time, in arrival order, holding the event loop for at most
 * `sliceMs` (and one piece) per turn of it: once the pieces run in a turn have taken that long,
 * the next one waits for the next turn, so that I/O, timers and other requests run in between.
 * Only the pieces' own time counts: a statement that comes in a turn busy with other work (a
 * burst's requests being read) runs at once while the database has not had its share of it.
 */
export class EventLoopTurns {
  private last: Promise<unknown> = Promise.resolve();
  /** Milliseconds the pieces have held the event loop in this turn of it. */
  private heldMs = 0;
  private turnWatched = false;

  constructor(private readonly sliceMs = EVENT_LOOP_SLICE_MS) {}

  /** Runs `work` after the pieces before it; `timed`: its whole run counts as holding the loop. */
  take<T>(work: () => Promise<T>, timed = true): Promise<T> {
    const turn = this.last
      .then(() => this.yieldIfLong())
      .then(() => (timed ? this.held(work) : work()));
    this.last = turn.catch(() => undefined);
    return turn;
  }

  /** Resolves at once while the pieces have had less than their share of this turn. */
  async yieldIfLong(): Promise<void> {
    if (this.heldMs < this.sliceMs) return;
    await nextTurn();
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
}

/** How long the embedded database's statements may hold the event loop before it yields. */
export const EVENT_LOOP_SLICE_MS = 10;
