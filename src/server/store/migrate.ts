// SPDX-License-Identifier: GPL-3.0-or-later
import type { Database } from './database.js';
import { DatabaseUnavailableError } from './databaseUnavailable.js';

/**
 * The migration runner, written here rather than taken from a library (docs/architecture.md says
 * why): ordered scripts with integer versions, recorded in `schema_migrations`, each applied as
 * one script (`exec`, never split on `;`) in its own transaction, under an advisory lock.
 */

export interface Migration {
  /** Its row in `schema_migrations`; versions ascend in the list. */
  version: number;
  /** Plain PostgreSQL, any number of statements. */
  sql: string;
}

/**
 * Held (transaction-scoped) by each migration's transaction, so that nodes starting at once on
 * one PostgreSQL migrate one by one. The same id as before the runner was rewritten, so that a
 * node of the previous release starting at the same moment waits for this one too.
 */
export const MIGRATION_LOCK_ID = 7_263_001;

/** The table the versions are recorded in, unchanged since the first release. */
const VERSIONS_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version integer PRIMARY KEY,
  applied_at timestamptz NOT NULL
)`;

/**
 * Applies the migrations that `schema_migrations` does not list, lowest version first, each in a
 * transaction of its own that takes the lock, reads the applied versions and applies the next
 * missing one: a failing migration rolls back alone (those before it stay applied, and the error
 * says which one failed), and a node that waited for the lock finds the work done. Versions the
 * database has and this list does not (a newer release migrated it) are left alone. Returns the
 * versions this call applied.
 */
export async function migrate(db: Database, migrations: readonly Migration[]): Promise<number[]> {
  checkOrder(migrations);
  const applied: number[] = [];
  for (;;) {
    const next = await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID]);
      await tx.exec(VERSIONS_TABLE);
      const done = await tx.query<{ version: number }>('SELECT version FROM schema_migrations');
      const versions = new Set(done.rows.map((r) => r.version));
      const migration = migrations.find((m) => !versions.has(m.version));
      if (!migration) return undefined;
      try {
        await tx.exec(migration.sql);
      } catch (err) {
        if (err instanceof DatabaseUnavailableError) throw err;
        throw new Error(`migration ${migration.version} failed: ${String(err)}`, { cause: err });
      }
      await tx.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())', [
        migration.version,
      ]);
      return migration.version;
    });
    if (next === undefined) return applied;
    applied.push(next);
  }
}

function checkOrder(migrations: readonly Migration[]): void {
  for (const [i, m] of migrations.entries()) {
    if (!Number.isInteger(m.version) || m.version < 1) {
      throw new Error(`migration version ${m.version} is not a positive integer`);
    }
    const before = migrations[i - 1];
    if (before && m.version <= before.version) {
      throw new Error(`migration ${m.version} follows ${before.version}: versions must ascend`);
    }
  }
}
