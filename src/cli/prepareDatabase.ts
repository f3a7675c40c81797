// SPDX-License-Identifier: GPL-3.0-or-later
import { ensureDatabaseTemplate } from '../server/store/databaseTemplate.js';
import { databaseTemplateDir } from './databaseTemplateDir.js';

/**
 * `node dist/cli/prepareDatabase.js`, run by `npm ci` and `npm run build` after the code is
 * built: makes the database template that a first `visage dev` copies instead of initialising a
 * database (once per PGlite version and set of migrations; at once when it is there).
 */
const dir = databaseTemplateDir();
if (!dir) {
  console.error('visage: no package folder found; the first start will initialise its database');
} else {
  const started = performance.now();
  const path = await ensureDatabaseTemplate(dir);
  const took = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`visage: database template ${path} (${took} s)`);
}
