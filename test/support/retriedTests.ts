// SPDX-License-Identifier: GPL-3.0-or-later
// A vitest reporter: the tests that failed and then passed on their retry (vitest.config.ts
// allows one), named at the end of the run and written to .tmp/retried-tests.json, which
// test/run.js prints in its closing lines. A retry keeps one starved moment on a loaded CI machine
// from failing a 40-minute run; a test that fails twice still fails it. Each one named here is a
// test to make robust, not a pass to forget.
import { mkdirSync, writeFileSync } from 'node:fs';
import type { Reporter, TestCase } from 'vitest/node';

export const RETRIED_FILE = '.tmp/retried-tests.json';

export default class RetriedTests implements Reporter {
  private readonly retried: { file: string; test: string; error: string }[] = [];

  onTestCaseResult(testCase: TestCase): void {
    const retries = testCase.diagnostic()?.retryCount ?? 0;
    if (retries === 0 || testCase.result().state !== 'passed') return;
    this.retried.push({
      file: testCase.module.relativeModuleId,
      test: testCase.fullName,
      error: testCase.result().errors?.[0]?.message ?? '',
    });
  }

  onTestRunEnd(): void {
    mkdirSync('.tmp', { recursive: true });
    writeFileSync(RETRIED_FILE, JSON.stringify(this.retried, null, 2));
  }
}
