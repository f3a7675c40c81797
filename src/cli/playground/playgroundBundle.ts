// SPDX-License-Identifier: GPL-3.0-or-later
import type { BuildOptions } from 'esbuild';

/**
 * How the playground's page script (browser/playground.ts) is bundled with livekit-client into
 * one self-contained ES module: by the build (tsup.config.ts writes dist/playground/playground.js),
 * and on demand when the CLI runs from the TypeScript sources. livekit-client is a development
 * dependency: an installed `visage` carries only this bundle, and the page loads nothing from a
 * CDN, so the playground works offline.
 */
export const playgroundBundleOptions = (entry: string): BuildOptions => ({
  entryPoints: [entry],
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome105', 'firefox110', 'safari16'],
  minify: true,
  // livekit-client's licence notices stay in the bundle, at its end.
  legalComments: 'eof',
  logLevel: 'silent',
});
