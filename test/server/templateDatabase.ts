// SPDX-License-Identifier: GPL-3.0-or-later
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { databaseTemplateDir } from '../../src/cli/databaseTemplateDir.js';
import { ensureDatabaseTemplate } from '../../src/server/store/databaseTemplate.js';

/**
 * vitest global setup: one initialised embedded database that every test copies (milliseconds)
 * instead of initialising its own. See `freshDataDir`.
 *
 * It is the template `npm ci` made for `visage dev` (node_modules/.cache/visage, one per PGlite
 * version and set of migrations: src/server/store/databaseTemplate.ts), made here when it is
 * not there yet: initialising one costs about 13 CPU-seconds, which every vitest run (each
 * project, each single test file) paid before. The run gets its own copy in its scratch
 * folder, so that a test that opens the template itself changes only this run's copy.
 */
export default async function setup(project: TestProject): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'visage-template-'));
  const cache = databaseTemplateDir() ?? join(dir, 'cache');
  cpSync(await ensureDatabaseTemplate(cache), join(dir, 'db'), { recursive: true });
  project.provide('dbTemplate', dir);
}

declare module 'vitest' {
  export interface ProvidedContext {
    dbTemplate: string;
  }
}

export { copiedFromTemplate, copyTemplate, emptyDataDir } from './databaseCopies.js';
