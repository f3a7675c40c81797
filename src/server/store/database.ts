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

export interface Database extends Queryable {
  /** `embedded`: PGlite in the data directory (one process); `postgres`: a shared server. */
  readonly kind: 'embedded' | 'postgres';
  /** Runs `fn` in one transaction; concurrent transactions are serialized. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  exec(sql: string): Promise<void>;
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
        }),
      ),
    exec: async (sql) => {
      await pg.exec(sql);
    },
    close: () => pg.close(),
  };
}
