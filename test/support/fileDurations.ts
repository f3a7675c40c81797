// SPDX-License-Identifier: GPL-3.0-or-later
// A vitest reporter: each test file's whole time in this run (importing it, its hooks and its
// tests), written to .tmp/file-durations.json as `project:path`: seconds, the shape of
// test/fileDurations.json, which `node test/fileDurations.js` refreshes from it. The JSON
// report's per-file times start at the first test, after the file's `beforeAll`: a file that
// does its work there (photoMouth: 404 s of builds and measures) read 2.7 s, so vitest started
// it late, and it ran alone at the end of the run.
import { mkdirSync, writeFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

export const FILE_DURATIONS = '.tmp/file-durations.json';

export default class FileDurations implements Reporter {
  private readonly seconds: Record<string, number> = {};

  onTestModuleEnd(module: TestModule): void {
    const d = module.diagnostic();
    const ms =
      d.environmentSetupDuration +
      d.prepareDuration +
      d.collectDuration +
      d.setupDuration +
      d.duration;
    const key = `${module.project.name}:${module.relativeModuleId}`;
    this.seconds[key] = Math.round(ms / 100) / 10;
  }

  onTestRunEnd(): void {
    mkdirSync('.tmp', { recursive: true });
    writeFileSync(FILE_DURATIONS, `${JSON.stringify(this.seconds, null, 2)}\n`);
  }
}
