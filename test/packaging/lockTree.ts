// SPDX-License-Identifier: GPL-3.0-or-later
// The `packages` map of a package-lock.json (v3) as a dependency tree: which installed package
// a dependency resolves to (Node's lookup: the nearest node_modules upwards), and everything a
// set of packages pulls in.

export interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
  dev?: boolean;
  devOptional?: boolean;
  optional?: boolean;
  peer?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [field: string]: unknown;
}

/** Location ('' is the project, `node_modules/a/node_modules/b` a nested one) → entry. */
export type LockPackages = Record<string, LockEntry>;

/** Where `name`, required from the package at `from`, is installed; undefined when nowhere. */
export function resolveIn(packages: LockPackages, from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = `${dir ? `${dir}/` : ''}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (dir === '') return undefined;
    const up = dir.lastIndexOf('/node_modules/');
    dir = up < 0 ? '' : dir.slice(0, up);
  }
}

/** The names a package needs at run time: dependencies, optional ones, non-optional peers. */
export function requiredNames(entry: LockEntry): string[] {
  const peers = Object.keys(entry.peerDependencies ?? {}).filter(
    (name) => !entry.peerDependenciesMeta?.[name]?.optional,
  );
  return [
    ...Object.keys(entry.dependencies ?? {}),
    ...Object.keys(entry.optionalDependencies ?? {}),
    ...peers,
  ];
}

/**
 * Every location that the packages at `roots` pull in, themselves included (a link is followed
 * to its target). An optional dependency that is not installed (another platform's binary) is
 * skipped; any other missing dependency is an error that names it.
 */
export function closure(packages: LockPackages, roots: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const queue = [...roots];
  while (queue.length > 0) {
    const at = queue.pop()!;
    if (seen.has(at)) continue;
    seen.add(at);
    const entry = packages[at]!;
    if (entry.link && entry.resolved !== undefined) {
      queue.push(entry.resolved);
      continue;
    }
    for (const name of requiredNames(entry)) {
      const found = resolveIn(packages, at, name);
      if (found) queue.push(found);
      else if (!(name in (entry.optionalDependencies ?? {}))) {
        throw new Error(`${at || 'the project'} needs ${name}, which is not installed`);
      }
    }
  }
  return seen;
}
