// SPDX-License-Identifier: GPL-3.0-or-later
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { openEmbeddedDatabase } from '../../src/server/store/database.js';
import { migrate } from '../../src/server/store/migrate.js';
import { Store } from '../../src/server/store/store.js';
import { migrationCases } from './migrationSuite.js';
import { copyTemplate } from './templateDatabase.js';

describe('migrations on the embedded PGlite', () => {
  migrationCases({
    migrated: () => openEmbeddedDatabase(copyTemplate(inject('dbTemplate'))),
    empty: async () => {
      const dir = mkdtempSync(join(tmpdir(), 'visage-migrate-'));
      return { db: await openEmbeddedDatabase(dir), openStore: () => Store.openEmbedded(dir) };
    },
  });

  it('refuses a list whose versions do not ascend, before touching the database', async () => {
    const db = await openEmbeddedDatabase(copyTemplate(inject('dbTemplate')));
    try {
      await expect(
        migrate(db, [
          { version: 2, sql: 'SELECT 1' },
          { version: 1, sql: 'SELECT 1' },
        ]),
      ).rejects.toThrow('versions must ascend');
    } finally {
      await db.close();
    }
  });
});
