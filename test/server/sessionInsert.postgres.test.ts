// SPDX-License-Identifier: GPL-3.0-or-later
import { afterAll, describe, inject } from 'vitest';
import { Store } from '../../src/server/store/store.js';
import { freshPostgresDatabase } from '../support/embeddedPostgres.js';
import { sessionInsertCases } from './sessionInsertSuite.js';

const serverUrl = inject('postgresUrl');
const opened: Store[] = [];
afterAll(() => Promise.all(opened.map((s) => s.close())));

describe.skipIf(!serverUrl)("the create's check-and-insert on a real PostgreSQL server", () => {
  sessionInsertCases({
    // Stores on one database, as nodes are: each its own pool, so the creates race in the server.
    stores: async (count) => {
      const url = await freshPostgresDatabase(serverUrl);
      const stores = await Promise.all(
        Array.from({ length: count }, () => Store.openPostgres(url)),
      );
      opened.push(...stores);
      return stores;
    },
  });
});
