// SPDX-License-Identifier: GPL-3.0-or-later
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { playgroundBundleOptions } from './playgroundBundle.js';

/**
 * The playground's page script, bundled: from the build, dist/playground/playground.js (tsup puts
 * shared chunks at the root of dist/ and entries under their names, so it is one or two levels
 * up from this module's chunk); from the TypeScript sources (tests, tsx), bundled now with
 * esbuild, which the build uses too (a development dependency, there in this repository).
 */
export async function loadPlaygroundScript(): Promise<string> {
  const here = import.meta.url;
  if (here.endsWith('.ts')) {
    const esbuild = await import('esbuild');
    const entry = fileURLToPath(new URL('./browser/playground.ts', here));
    try {
      const built = await esbuild.build({ ...playgroundBundleOptions(entry), write: false });
      return built.outputFiles![0]!.text;
    } finally {
      // Its service process would otherwise outlive the need (and hold a test's worker open).
      await esbuild.stop();
    }
  }
  for (const relative of ['./playground/playground.js', '../playground/playground.js']) {
    const path = fileURLToPath(new URL(relative, here));
    if (existsSync(path)) return readFile(path, 'utf8');
  }
  throw new Error(
    'the playground script is missing from the build (dist/playground/playground.js)',
  );
}
