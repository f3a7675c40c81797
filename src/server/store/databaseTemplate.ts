// SPDX-License-Identifier: GPL-3.0-or-later
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MIGRATIONS } from './schema.js';
import { Store } from './store.js';

/**
 * A template of the embedded database: a data directory that PGlite initialised and this
 * release's migrations migrated, closed cleanly, that a first start copies (tens of
 * milliseconds) instead of running PGlite's initdb (6 to 30 s on a 2-core machine, most of a
 * cold `visage dev`). Its name holds PGlite's version and a hash of the migrations, so a template
 * made by another release is never used; the store still applies any missing migration.
 */
export function databaseTemplateName(): string {
  const hash = createHash('sha256');
  for (const m of MIGRATIONS) hash.update(`${m.version}\n${m.sql}\n`);
  return `db-template-pglite-${pgliteVersion()}-${hash.digest('hex').slice(0, 16)}`;
}

/** The template under `cacheDir`, made now when it is not there yet; returns its path. */
export async function ensureDatabaseTemplate(cacheDir: string): Promise<string> {
  const path = join(cacheDir, databaseTemplateName());
  if (existsSync(join(path, 'PG_VERSION'))) return path;
  mkdirSync(cacheDir, { recursive: true });
  // Made aside and renamed into place: a template is whole or absent, even when two builds race.
  const scratch = mkdtempSync(join(cacheDir, '.making-'));
  try {
    const store = await Store.openEmbedded(scratch);
    await store.close();
    try {
      renameSync(join(scratch, 'db'), path);
    } catch (err) {
      if (!existsSync(join(path, 'PG_VERSION'))) throw err; // else the other build won
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return path;
}

function pgliteVersion(): string {
  // Through require's resolution, not import.meta.resolve, which vite's module runner (vitest's
  // global setup, test/server/templateDatabase.ts) does not support.
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  // The entry is <package>/dist/index.cjs.
  const manifest = join(dirname(dirname(entry)), 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}
