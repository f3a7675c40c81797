// SPDX-License-Identifier: GPL-3.0-or-later
// An agent developer's project, made as they make it: the plugin and the client packed as they
// would be published, installed into a folder next to packages from the registry
// (`@livekit/agents`, and whatever else the test names), at this repository's versions.
//
// The install is `npm ci --offline` from a lockfile made of this repository's own (see
// scratchLockfile.ts): the same versions, from npm's cache, no registry needed.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { PACKAGES_BUILD_LOCK } from '../cli/builtCli.js';
import { oncePerRun, releaseLock, takeLock } from '../support/oncePerRun.js';
import { type PackedWorkspace, scratchLockfile } from './scratchLockfile.js';

const run = promisify(execFile);
const MB = 1024 * 1024;
export const WORKSPACES = ['packages/client', 'packages/livekit-plugin'];

/**
 * npm as a user runs it: none of the npm_* settings of the `npm test` this may run under (its
 * `npm_config_local_prefix` would make this repository the project), but the same cache.
 */
export function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !key.toLowerCase().startsWith('npm_') || key.toLowerCase() === 'npm_config_cache',
    ),
  );
}

export async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run('npm', args, {
    cwd,
    env: npmEnv(),
    maxBuffer: 64 * MB,
    timeout: 300_000,
  });
  return stdout;
}

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

export function manifestOf(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
}

export type Packed = PackedWorkspace & { files: string[] };

/**
 * Runs `work` while no other test file (of this run or another on the same checkout) builds the
 * packages: two builds at once would write (and clean) the same dist folders. A crashed run's
 * lock is taken over (takeLock).
 */
async function exclusively<T>(repo: string, work: () => Promise<T>): Promise<T> {
  const lock = join(repo, PACKAGES_BUILD_LOCK);
  mkdirSync(dirname(lock), { recursive: true });
  await takeLock(lock);
  try {
    return await work();
  } finally {
    releaseLock(lock);
  }
}

/**
 * Builds both packages as `npm pack` builds them (their prepack) from `repo`, and packs them into
 * `destination` as they would be published. Built and packed once per test run (oncePerRun: the
 * build with the declarations costs about 35 CPU-seconds), then copied to each `destination`.
 */
export async function packWorkspaces(repo: string, destination: string): Promise<Packed[]> {
  const packedDir = join(process.env.VISAGE_TEST_SCRATCH ?? destination, 'packed-workspaces');
  const report = await oncePerRun('pack-workspaces', () =>
    exclusively(repo, async () => {
      mkdirSync(packedDir, { recursive: true });
      // Both at once: nearly all of it is each package's declarations.
      await Promise.all(WORKSPACES.map((dir) => npm(['run', 'build', '--workspace', dir], repo)));
      // These two by name: the workspace also holds the browser package, which no agent needs.
      const workspaces = WORKSPACES.flatMap((dir) => ['--workspace', dir]);
      return npm(
        ['pack', ...workspaces, '--ignore-scripts', '--json', '--pack-destination', packedDir],
        repo,
      );
    }),
  );
  const tarballs = JSON.parse(report) as {
    name: string;
    version: string;
    filename: string;
    integrity: string;
    files: { path: string }[];
  }[];
  for (const t of tarballs)
    copyFileSync(join(packedDir, t.filename), join(destination, t.filename));
  return tarballs.map((t) => {
    const dir = WORKSPACES.find((d) => manifestOf(join(repo, d)).name === t.name)!;
    const { dependencies = {}, peerDependencies = {} } = manifestOf(join(repo, dir));
    const { name, version, filename, integrity } = t;
    const files = t.files.map((f) => f.path);
    return { dir, name, version, filename, integrity, dependencies, peerDependencies, files };
  });
}

/**
 * Installs `fromRegistry` (at this repository's versions) and the `packed` tarballs (which must
 * lie in `project`) into `project`, whose package.json is `fields` plus those dependencies.
 * Answers the manifest written.
 */
export async function installProject(
  repo: string,
  project: string,
  fromRegistry: readonly string[],
  packed: readonly Packed[],
  fields?: Record<string, unknown> & { name?: string },
): Promise<{ dependencies: Record<string, string> }> {
  const repositoryLock = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8')) as {
    packages: Parameters<typeof scratchLockfile>[0]['packages'];
  };
  const { manifest, lock } = scratchLockfile(
    repositoryLock,
    fields?.name ?? 'an-agent',
    fromRegistry,
    packed,
    fields,
  );
  writeFileSync(join(project, 'package.json'), JSON.stringify(manifest, null, 2));
  writeFileSync(join(project, 'package-lock.json'), JSON.stringify(lock, null, 2));
  await npm(['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], project);
  return manifest as { dependencies: Record<string, string> };
}
