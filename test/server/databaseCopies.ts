// SPDX-License-Identifier: GPL-3.0-or-later
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
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

/** A new, empty data directory (as a user's first command finds it), removed with the copies. */
export function emptyDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'visage-empty-'));
  copies.push(dir);
  return dir;
}

/**
 * Whether the embedded database in `dataDir` was copied from the template rather than created:
 * PostgreSQL gives every database it creates a random system identifier (the first 8 bytes of
 * `global/pg_control`), and a copy keeps the template's.
 */
export function copiedFromTemplate(dataDir: string, template: string): boolean {
  const id = (dir: string) => readFileSync(join(dir, 'db', 'global', 'pg_control')).subarray(0, 8);
  return id(dataDir).equals(id(template));
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
