// SPDX-License-Identifier: GPL-3.0-or-later
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * vitest global setup: one scratch folder for the whole run, removed when the run ends. Every
 * temp dir a test makes (`os.tmpdir()` in the workers, which inherit TMPDIR) lands inside it:
 * data directories with their database and files are about 80 MB each and a full run makes
 * a few hundred, so left behind they fill a disk in a day of runs.
 *
 * Both projects list this setup; the first to run owns the folder, the other reuses it.
 */
export default function setup(): (() => void) | undefined {
  if (process.env.VISAGE_TEST_SCRATCH) return undefined;
  const root = mkdtempSync(join(tmpdir(), 'visage-test-run-'));
  // Traversable by others: the test PostgreSQL runs as the unprivileged `postgres` user (as
  // root) and reads its password file and data directory from in here.
  chmodSync(root, 0o755);
  process.env.VISAGE_TEST_SCRATCH = root;
  process.env.TMPDIR = root;
  return () => {
    rmSync(root, { recursive: true, force: true });
    delete process.env.VISAGE_TEST_SCRATCH;
  };
}
