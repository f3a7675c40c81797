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
 * once they have held the event loop for EVENT_LOOP_SLICE_MS, the next statement (also within a
 * transaction) waits for the next turn of the loop. The loop is then held for about a slice and
 * one statement at most.
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
    transaction: (fn) =>
      turns.take(() =>
        pg.transaction((tx) =>
          fn({
            query: async <T>(sql: string, params: unknown[] = []) => {
              await turns.yieldIfLong();
              return { rows: (await tx.query<T>(sql, params)).rows };
            },
            exec: async (sql) => {
              await turns.yieldIfLong();
              await tx.exec(sql);
            },
          }),
        ),
      ),
    exec: (sql) =>
      turns.take(async () => {
        await pg.exec(sql);
      }),
    close: () => turns.take(() => pg.close()),
  };
}

/**
 * Work that runs one piece at a time, in arrival order. A slice opens with the first piece that
 * runs in a turn of the event loop, at once, and closes when the loop turns; within it, pieces
 * run back to back for at most `sliceMs`, and the next one then starts in a later turn, so that
 * I/O, timers and other requests run in between. A statement that comes while the loop was idle
 * (a request's key lookup) thus runs at once, not after the rest of the turn.
 */
export class EventLoopTurns {
  private last: Promise<unknown> = Promise.resolve();
  /** When the open slice started; undefined when none is open in this turn of the loop. */
  private sliceStarted: number | undefined;

  constructor(private readonly sliceMs = EVENT_LOOP_SLICE_MS) {}

  take<T>(work: () => Promise<T>): Promise<T> {
    const turn = this.last.then(() => this.yieldIfLong()).then(work);
    this.last = turn.catch(() => undefined);
    return turn;
  }

  /** Resolves at once within a slice, else in the next turn of the event loop (a new slice). */
  async yieldIfLong(): Promise<void> {
    if (this.sliceStarted === undefined) {
      this.openSlice();
      return;
    }
    if (performance.now() - this.sliceStarted < this.sliceMs) return;
    await nextTurn();
    this.openSlice();
  }

  private openSlice(): void {
    this.sliceStarted = performance.now();
    setImmediate(() => (this.sliceStarted = undefined));
  }
}

/** How long the embedded database's statements may hold the event loop before it yields. */
export const EVENT_LOOP_SLICE_MS = 10;
