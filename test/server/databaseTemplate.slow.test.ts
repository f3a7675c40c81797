// SPDX-License-Identifier: GPL-3.0-or-later
import { mkdtempSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { keyAdmin } from '../../src/server/admin/keyAdmin.js';
import {
  databaseTemplateName,
  ensureDatabaseTemplate,
} from '../../src/server/store/databaseTemplate.js';
import { Store } from '../../src/server/store/store.js';
import { copyTemplate } from './templateDatabase.js';

const scratch = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));

describe('the database template', () => {
  it('is what a new embedded database starts from, copied rather than initialised', async () => {
    // A template that holds a key: a database initialised from nothing would not have it.
    const template = copyTemplate(inject('dbTemplate'));
    const marked = await Store.openEmbedded(template);
    await keyAdmin.create(marked, 'from-the-template', 1);
    await marked.close();

    const dir = scratch('visage-from-template-');
    const store = await Store.openEmbedded(dir, { template: join(template, 'db') });
    try {
      expect((await keyAdmin.list(store)).map((k) => k.name)).toEqual(['from-the-template']);
      await keyAdmin.create(store, 'written-here', 1);
    } finally {
      await store.close();
    }
    // A copy: the template is untouched by what the new database writes.
    const again = await Store.openEmbedded(template);
    expect((await keyAdmin.list(again)).map((k) => k.name)).toEqual(['from-the-template']);
    await again.close();
    // An existing database is opened, never replaced by the template.
    const reopened = await Store.openEmbedded(dir, { template: join(template, 'db') });
    expect((await keyAdmin.list(reopened)).map((k) => k.name).sort()).toEqual([
      'from-the-template',
      'written-here',
    ]);
    await reopened.close();
  }, 120_000);

  it('is set aside when PGlite cannot open it: the database is initialised as without one', async () => {
    const broken = scratch('visage-broken-template-');
    mkdirSync(join(broken, 'db'));
    writeFileSync(join(broken, 'db', 'PG_VERSION'), '9\n');
    const dir = scratch('visage-from-broken-');
    const store = await Store.openEmbedded(dir, { template: join(broken, 'db') });
    try {
      expect(await keyAdmin.list(store)).toEqual([]);
      await keyAdmin.create(store, 'works', 1);
      expect(await keyAdmin.list(store)).toHaveLength(1);
    } finally {
      await store.close();
    }
  }, 180_000);

  it('is made once per PGlite version and set of migrations, whole, under its cache folder', async () => {
    const cache = scratch('visage-template-cache-');
    const path = await ensureDatabaseTemplate(cache);
    expect(basename(path)).toBe(databaseTemplateName());
    expect(databaseTemplateName()).toMatch(/^db-template-pglite-\d+\.\d+\.\d+-[0-9a-f]{16}$/);
    const made = statSync(join(path, 'PG_VERSION')).mtimeMs;
    // The second call finds it: nothing is made again.
    expect(await ensureDatabaseTemplate(cache)).toBe(path);
    expect(statSync(join(path, 'PG_VERSION')).mtimeMs).toBe(made);
    // It is a migrated database, ready to be copied.
    const dir = scratch('visage-from-made-');
    const store = await Store.openEmbedded(dir, { template: path });
    expect(await keyAdmin.list(store)).toEqual([]);
    await store.close();
  }, 180_000);
});
