import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One initialised embedded database that tests copy (see the file for why).
    globalSetup: ['test/server/templateDatabase.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: keep parallelism modest so media tests are not starved.
    maxWorkers: 2,
  },
});
