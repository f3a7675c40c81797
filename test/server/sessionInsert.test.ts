// SPDX-License-Identifier: GPL-3.0-or-later
import { afterAll, describe, inject } from 'vitest';
import { Store } from '../../src/server/store/store.js';
import { copyTemplate } from './templateDatabase.js';
import { sessionInsertCases } from './sessionInsertSuite.js';

let store: Store | undefined;
afterAll(() => store?.close());

describe("the create's check-and-insert on the embedded database", () => {
  sessionInsertCases({
    stores: async (count) => {
      store ??= await Store.openEmbedded(copyTemplate(inject('dbTemplate')));
      return Array.from({ length: count }, () => store!);
    },
  });
});
