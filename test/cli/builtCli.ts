// SPDX-License-Identifier: GPL-3.0-or-later
// The `visage` CLI exactly as a user runs it: bin/visage.js, which runs the tsup build in dist/.
// Free of vitest, so that helpers which also run outside it (bench/) can start the build too.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { oncePerRun, releaseLock, takeLock } from '../support/oncePerRun.js';

/**
 * The lock folder held while the workspace packages are built (test/packaging/agentProject.ts),
 * relative to the repository: their build empties their dist/, which the service's build imports.
 */
export const PACKAGES_BUILD_LOCK = '.tmp/packages-build.lock';

/** The node arguments that run the build: `node bin/visage.js ...`. */
export const BUILT_CLI = ['bin/visage.js'];

/**
 * Builds dist/ from the current source (tsup, as `npm ci` does, without type declarations), once
 * per test run (oncePerRun: several files run the build, which one tsup build serves), so that
 * bin/visage.js runs what is being tested and not an older build.
 */
let building: Promise<void> | undefined;
export function buildCli(): Promise<void> {
  building ??= oncePerRun('cli-build', async () => {
    const { build } = await import('tsup');
    const { default: config } = (await import('../../tsup.config.js')) as {
      default: Parameters<typeof build>[0];
    };
    await build({ ...config, dts: false, clean: false, silent: true });
  });
  return building.then(packagesBuilt);
}

/**
 * Waits while another test file builds the workspace packages (PACKAGES_BUILD_LOCK): a CLI
 * started meanwhile cannot find their dist/. A build that starts after this returns is not waited
 * for (it runs once per run, in one of the first files).
 */
async function packagesBuilt(): Promise<void> {
  const lock = join(process.cwd(), PACKAGES_BUILD_LOCK);
  mkdirSync(dirname(lock), { recursive: true });
  await takeLock(lock);
  releaseLock(lock);
}
