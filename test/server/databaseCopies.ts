// SPDX-License-Identifier: GPL-3.0-or-later
import { cpSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The copies this test file made, removed when it ends (removeDatabaseCopies.ts). */
const copies: string[] = [];

/** Copies the template database (templateDatabase.ts) into a new data directory. */
export function copyTemplate(template: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'visage-test-'));
  cpSync(join(template, 'db'), join(dir, 'db'), { recursive: true });
  copies.push(dir);
  return dir;
}

/**
 * Removes the copies made so far (about 1,000 files and 40 MB each), after the test file that
 * made them. Left to the end of the run (the scratch folder's removal, scratchRoot.ts), removing
 * a fast-tier run's copies at once took 42 s of its wall time on a busy machine.
 */
export async function removeCopies(): Promise<void> {
  const dirs = copies.splice(0);
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
}
