// SPDX-License-Identifier: GPL-3.0-or-later
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Where the measured per-file durations are kept (written by test/fileDurations.js). */
export const DURATIONS_FILE = 'test/fileDurations.json';

/** A file the durations do not know yet: a slow-tier one is guessed at 30 s, another at 1 s. */
const guess = (path: string) => (/\.(slow|postgres)\.test\.ts$/.test(path) ? 30 : 1);

/**
 * vitest's file order: the longest first, across both projects, from the durations measured in a
 * whole run and kept in the repository. With two workers a long file started last runs alone at
 * the end: in one CI rehearsal the 265 s lip-closure file started at minute 24 of 32, with the
 * other worker idle beside its last minute and a half. vitest's own order uses the durations
 * of this checkout's earlier runs, which a fresh clone (CI) does not have, and falls back to the
 * largest file first.
 */
export class LongestFirst extends BaseSequencer {
  private durations?: Record<string, number>;

  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    this.durations ??= readDurations();
    const seconds = (spec: TestSpecification) => {
      const path = relative(this.ctx.config.root, spec.moduleId);
      return this.durations![`${spec.project.name}:${path}`] ?? guess(path);
    };
    return Promise.resolve([...files].sort((a, b) => seconds(b) - seconds(a)));
  }
}

function readDurations(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}
