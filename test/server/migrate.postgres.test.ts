// SPDX-License-Identifier: GPL-3.0-or-later
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { openPostgresDatabase } from '../../src/server/store/postgresDatabase.js';
import { migrate } from '../../src/server/store/migrate.js';
import { MIGRATIONS } from '../../src/server/store/schema.js';
import { Store } from '../../src/server/store/store.js';
import { freshPostgresDatabase } from '../support/embeddedPostgres.js';
import { migrationCases, PLPGSQL_MIGRATION } from './migrationSuite.js';

const serverUrl = inject('postgresUrl');

async function emptyDatabase(): Promise<string> {
  const name = `visage_empty_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

describe.skipIf(!serverUrl)('migrations on a real PostgreSQL server', () => {
  migrationCases({
    migrated: async () => openPostgresDatabase(await freshPostgresDatabase(serverUrl)),
    empty: async () => {
      const url = await emptyDatabase();
      return { db: await openPostgresDatabase(url), openStore: () => Store.openPostgres(url) };
    },
  });

  it('applies a migration once when several nodes run it at the same moment', async () => {
    const url = await freshPostgresDatabase(serverUrl);
    const nodes = await Promise.all(Array.from({ length: 5 }, () => openPostgresDatabase(url)));
    try {
      const applied = await Promise.all(
        nodes.map((db) => migrate(db, [...MIGRATIONS, PLPGSQL_MIGRATION])),
      );
      expect(applied.flat()).toEqual([PLPGSQL_MIGRATION.version]);
      const rows = await nodes[0]!.query<{ n: number }>('SELECT n FROM probe ORDER BY n');
      expect(rows.rows.map((r) => r.n)).toEqual([1, 2]);
    } finally {
      await Promise.all(nodes.map((db) => db.close()));
    }
  });
});
