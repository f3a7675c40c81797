// SPDX-License-Identifier: GPL-3.0-or-later
// Every source file says which licence it is under, in its first line (after a `#!` line): the
// Apache-2.0 packages (packages/: the wire contract, the client, the plugin), the examples a user
// copies and the one service file they import (src/rtcNodeLog.ts) are Apache-2.0; the rest of
// the service is GPL-3.0-or-later (LICENSE). CONTRIBUTING.md says the same.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const APACHE = 'Apache-2.0';
const GPL = 'GPL-3.0-or-later';

/** The licence of a path, by the first rule whose prefix it starts with. */
const RULES: [prefix: string, licence: string][] = [
  ['src/rtcNodeLog.ts', APACHE],
  ['packages/', APACHE],
  ['examples/', APACHE],
  ['', GPL],
];
const ROOTS = ['src', 'packages', 'examples', 'bin', 'test', 'bench'];
const SOURCE = /\.(ts|tsx|js|mjs|cjs)$/;
const SKIP = new Set(['node_modules', 'dist', 'fixtures', '.tmp']);

function licenceOf(path: string): string {
  return RULES.find(([prefix]) => path.startsWith(prefix))![1];
}

function sources(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sources(path));
    else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) found.push(path);
  }
  return found;
}

/** The licence a file declares: its SPDX line, the first line after an optional `#!` line. */
function declared(path: string): string | undefined {
  const lines = readFileSync(path, 'utf8').split('\n', 3);
  const line = lines[0]!.startsWith('#!') ? lines[1] : lines[0];
  return /^\/\/ SPDX-License-Identifier: (\S+)$/.exec(line ?? '')?.[1];
}

describe('licences', () => {
  it('every source file declares its folder’s licence in an SPDX line', () => {
    const files = ROOTS.flatMap((root) => sources(root));
    expect(files.length).toBeGreaterThan(300);
    const wrong = files
      .map((file) => ({ file, want: licenceOf(file), has: declared(file) }))
      .filter((f) => f.has !== f.want)
      .map((f) => `${f.file}: ${f.has ?? 'no SPDX line'}, should be ${f.want}`);
    expect(wrong).toEqual([]);
  });

  it('the packages’ manifests and licence files agree with their sources', () => {
    for (const dir of ['packages/client', 'packages/livekit-plugin', 'packages/web']) {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        license: string;
      };
      expect(manifest.license).toBe(APACHE);
      expect(readFileSync(join(dir, 'LICENSE'), 'utf8')).toMatch(/Apache License\s+Version 2\.0/);
    }
    const root = JSON.parse(readFileSync('package.json', 'utf8')) as { license: string };
    expect(root.license).toBe(GPL);
    expect(readFileSync('LICENSE', 'utf8')).toMatch(/GNU GENERAL PUBLIC LICENSE\s+Version 3/);
  });
});
