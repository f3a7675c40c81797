import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
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

/** Opens (creating on first use) the embedded database under `<dataDir>/db`. */
export async function openEmbeddedDatabase(dataDir: string): Promise<Database> {
  mkdirSync(dataDir, { recursive: true });
  const pg = new PGlite(join(dataDir, 'db'));
  await pg.waitReady;
  return {
    kind: 'embedded',
    query: async <T>(sql: string, params: unknown[] = []) => {
      const r = await pg.query<T>(sql, params);
      return { rows: r.rows };
    },
    transaction: (fn) =>
      pg.transaction((tx) =>
        fn({
          query: async <T>(sql: string, params: unknown[] = []) => ({
            rows: (await tx.query<T>(sql, params)).rows,
          }),
          exec: async (sql) => {
            await tx.exec(sql);
          },
        }),
      ),
    exec: async (sql) => {
      await pg.exec(sql);
    },
    close: () => pg.close(),
  };
}
