// SPDX-License-Identifier: GPL-3.0-or-later
// A package-lock.json for a scratch project that installs packed tarballs of this repository's
// workspace packages next to packages from the registry (`@livekit/agents`), with the same
// versions, resolved URLs and integrities as this repository's own lock. `npm ci --offline` then
// installs it from npm's cache (which this repository's `npm ci` filled) without asking the
// registry anything: the test runs where only loopback is reachable.
import { closure, type LockEntry, type LockPackages } from './lockTree.js';

export interface PackedWorkspace {
  /** The workspace folder in this repository (`packages/client`). */
  dir: string;
  name: string;
  version: string;
  /** The tarball's file name, in the scratch project's folder. */
  filename: string;
  integrity: string;
  /** Its package.json's, which the repository's lock may not have caught up with. */
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
}

/** Fields of a lock entry that describe how this repository uses a package, not the package. */
const THIS_REPOSITORYS_FLAGS = ['dev', 'devOptional', 'peer', 'extraneous'];

function withoutRepositoryFlags(entry: LockEntry): LockEntry {
  return Object.fromEntries(
    Object.entries(entry).filter(([field]) => !THIS_REPOSITORYS_FLAGS.includes(field)),
  );
}

/**
 * The lock of a project named `name` whose dependencies are `fromRegistry` (names installed in
 * this repository, at the versions installed here) and the `packed` tarballs. Throws when the
 * repository's lock lacks something they need (run `npm install` after changing a workspace's
 * dependencies). `fields` are the rest of its package.json (what `npm init -y` wrote, say).
 */
export function scratchLockfile(
  repositoryLock: { packages: LockPackages },
  name: string,
  fromRegistry: readonly string[],
  packed: readonly PackedWorkspace[],
  fields: Record<string, unknown> = { private: true, type: 'module' },
): { manifest: object; lock: object } {
  // The workspaces as packed: their dependencies, resolved in this repository's tree.
  const repo: LockPackages = { ...repositoryLock.packages };
  for (const p of packed) {
    const { dependencies, peerDependencies } = p;
    repo[p.dir] = { ...repo[p.dir], dependencies, peerDependencies };
  }
  const placed = new Map(packed.map((p) => [p.dir, `node_modules/${p.name}`]));
  const roots = [...fromRegistry.map((dep) => `node_modules/${dep}`), ...placed.keys()];
  for (const root of roots) {
    if (!repo[root]) throw new Error(`${root} is not in this repository's package-lock.json`);
  }

  const packages: LockPackages = {};
  for (const at of closure(repo, roots)) {
    const entry = repo[at]!;
    if (entry.link || placed.has(at)) continue; // the workspace packages come from their tarballs
    const workspace = [...placed.keys()].find((dir) => at.startsWith(`${dir}/`));
    const there = workspace ? at.replace(workspace, placed.get(workspace)!) : at;
    packages[there] = withoutRepositoryFlags(entry);
  }
  for (const p of packed) {
    packages[`node_modules/${p.name}`] = {
      ...withoutRepositoryFlags(repo[p.dir]!),
      name: undefined,
      version: p.version,
      resolved: `file:${p.filename}`,
      integrity: p.integrity,
    };
  }

  const dependencies = Object.fromEntries([
    ...fromRegistry.map((dep) => [dep, repo[`node_modules/${dep}`]!.version!]),
    ...packed.map((p) => [p.name, `file:${p.filename}`]),
  ]);
  const manifest = { name, version: '1.0.0', ...fields, dependencies };
  const lock = {
    name,
    version: '1.0.0',
    lockfileVersion: 3,
    requires: true,
    packages: { '': { name, version: '1.0.0', dependencies }, ...packages },
  };
  return { manifest, lock };
}
