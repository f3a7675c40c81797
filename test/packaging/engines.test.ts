// SPDX-License-Identifier: GPL-3.0-or-later
// `npm ci` must install cleanly on every Node version the package says it supports: no installed
// package may ask for a newer Node than `engines.node` (npm prints EBADENGINE warnings, and the
// package may really need that Node).
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

interface LockPackage {
  engines?: { node?: string } | string[];
  optional?: boolean;
}

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
  packages: Record<string, LockPackage>;
};

describe('supported Node versions', () => {
  it('every locked dependency runs on the oldest Node that package.json accepts', () => {
    const oldest = semver.minVersion(pkg.engines.node)!.version;
    const refusing = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && !entry.optional) // npm skips optional ones that refuse
      .flatMap(([path, entry]) => {
        const wanted = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
        return wanted && !semver.satisfies(oldest, wanted) ? [`${path} wants node ${wanted}`] : [];
      });
    expect(refusing).toEqual([]);
  });
});
