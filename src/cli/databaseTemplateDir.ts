// SPDX-License-Identifier: GPL-3.0-or-later
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the installation keeps its database template (see databaseTemplate.ts):
 * `node_modules/.cache/visage` in the `visage` package's folder, made by `npm ci` (the `prepare`
 * script) and by `npm run build`. Undefined when the package's folder cannot be found.
 */
export function databaseTemplateDir(): string | undefined {
  // From dist/cli/, dist/ (a shared chunk) or src/cli/ (under tsx): the first folder up with
  // this package's manifest.
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && isVisage(manifest)) return join(dir, 'node_modules/.cache/visage');
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

function isVisage(manifest: string): boolean {
  try {
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'visage';
  } catch {
    return false;
  }
}
