// SPDX-License-Identifier: GPL-3.0-or-later
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { databaseTemplateName } from '../server/store/databaseTemplate.js';

/**
 * Where the installation keeps its database template (see databaseTemplate.ts):
 * `node_modules/.cache/visage` in the `visage` package's folder, made by `npm ci` (the `prepare`
 * script) and by `npm run build`. Undefined when the package's folder cannot be found.
 */
export function databaseTemplateDir(): string | undefined {
  // From dist/cli/, dist/ (a shared chunk) or src/cli/ (under tsx): the first folder up with
  // this package's manifest.
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && isVisage(manifest)) return join(dir, 'node_modules/.cache/visage');
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/**
 * This installation's template for the database's current migrations (`npm ci` made it), for
 * every command that may create an embedded database in a new data directory (`visage dev`,
 * `serve` and `keys`): copying it takes a fraction of a second where creating a database takes
 * several CPU-seconds. The store falls back to creating one where the template is missing.
 */
export function installedDatabaseTemplate(): string | undefined {
  const dir = databaseTemplateDir();
  return dir && join(dir, databaseTemplateName());
}

function isVisage(manifest: string): boolean {
  try {
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'visage';
  } catch {
    return false;
  }
}
