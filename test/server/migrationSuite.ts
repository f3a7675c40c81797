// SPDX-License-Identifier: GPL-3.0-or-later
import { expect, it } from 'vitest';
import type { Database } from '../../src/server/store/database.js';
import { migrate, type Migration } from '../../src/server/store/migrate.js';
import { MIGRATIONS } from '../../src/server/store/schema.js';
import type { Store } from '../../src/server/store/store.js';

/**
 * The migration runner's cases, run on the embedded PGlite (migrate.slow.test.ts) and on a real
 * PostgreSQL (migrate.postgres.test.ts).
 */
export interface MigrationTarget {
  /** A database the current schema is applied to. */
  migrated(): Promise<Database>;
  /** An empty database, and how to open a Store on it once `db` is closed. */
  empty(): Promise<{ db: Database; openStore(): Promise<Store> }>;
}

const NEXT = MIGRATIONS.length + 1;

/**
 * A migration as people write them: a `DO $$ … $$` block and a string holding `;` between
 * ordinary statements. The runner before this one split scripts on `;` and failed on it.
 */
export const PLPGSQL_MIGRATION: Migration = {
  version: NEXT,
  sql: `
  CREATE TABLE probe (n integer NOT NULL, note text);
  DO $$
  BEGIN
    INSERT INTO probe (n) VALUES (1);
    IF NOT EXISTS (SELECT 1 FROM pg_indexes WHERE indexname = 'probe_n') THEN
      CREATE INDEX probe_n ON probe (n);
    END IF;
  END $$;
  INSERT INTO probe (n, note) VALUES (2, 'one; two');
  `,
};

async function versions(db: Database): Promise<number[]> {
  const r = await db.query<{ version: number }>(
    'SELECT version FROM schema_migrations ORDER BY version',
  );
  return r.rows.map((row) => row.version);
}

export function migrationCases(target: MigrationTarget): void {
  it('runs a migration holding a DO $$ … $$ block and a ";" in a string as one script', async () => {
    const db = await target.migrated();
    try {
      expect(await migrate(db, [...MIGRATIONS, PLPGSQL_MIGRATION])).toEqual([NEXT]);
      const rows = await db.query<{ n: number; note: string | null }>(
        'SELECT n, note FROM probe ORDER BY n',
      );
      expect(rows.rows).toEqual([
        { n: 1, note: null },
        { n: 2, note: 'one; two' },
      ]);
      const index = await db.query(`SELECT 1 FROM pg_indexes WHERE indexname = 'probe_n'`);
      expect(index.rows).toHaveLength(1);
      expect(await versions(db)).toEqual([...MIGRATIONS.map((m) => m.version), NEXT]);
      // Applied once: a second run has nothing to do.
      expect(await migrate(db, [...MIGRATIONS, PLPGSQL_MIGRATION])).toEqual([]);
    } finally {
      await db.close();
    }
  });

  it('rolls a failing migration back alone, keeping those before it, and names it', async () => {
    const db = await target.migrated();
    try {
      const failing: Migration = {
        version: NEXT + 1,
        sql: `CREATE TABLE half_done (n integer); SELECT 1 / 0;`,
      };
      await expect(migrate(db, [...MIGRATIONS, PLPGSQL_MIGRATION, failing])).rejects.toThrow(
        `migration ${NEXT + 1} failed`,
      );
      expect(await versions(db)).toEqual([...MIGRATIONS.map((m) => m.version), NEXT]);
      const table = await db.query<{ t: string | null }>(`SELECT to_regclass('half_done') AS t`);
      expect(table.rows[0]!.t).toBeNull();
    } finally {
      await db.close();
    }
  });

  it('upgrades a database the previous release made, keeping its rows', async () => {
    const { db, openStore } = await target.empty();
    // What the previous runner left after the first three migrations: their tables, and their
    // versions in schema_migrations.
    await db.exec(
      `CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL)`,
    );
    for (const m of MIGRATIONS.slice(0, 3)) {
      await db.exec(m.sql);
      await db.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())', [
        m.version,
      ]);
    }
    await db.query(
      `INSERT INTO api_keys (id, name, secret_hash, secret_hint, concurrency_cap, created_at)
       VALUES ('key_old', 'old', 'hash', 'sk_…abcd', 2, now())`,
    );
    await db.close();
    const store = await openStore();
    try {
      const key = await store.getKey('key_old');
      expect(key).toMatchObject({ id: 'key_old', name: 'old', concurrencyCap: 2, revokedAt: null });
      // The later migrations are there: voices has its engine column, avatars exists.
      await store.insertVoice({
        id: 'voice_1',
        keyId: 'key_old',
        name: 'v',
        fileId: null,
        sourceUrl: null,
        durationMs: 1000,
        engine: 'espeak',
        profile: { pitch: 1 },
      });
      expect((await store.getVoice('key_old', 'voice_1'))?.engine).toBe('espeak');
      expect(await store.listStockAvatars()).toEqual([]);
    } finally {
      await store.close();
    }
  });
}
