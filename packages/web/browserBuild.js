// SPDX-License-Identifier: Apache-2.0
/**
 * `dist/browser.js`, one file for a page with no bundler (an import map, or a CDN): the package
 * with @visage-avatar/client/face and zod's small build inside, minified. It imports nothing:
 * livekit-client is the page's (the package works on the page's Room and names its types only).
 * esbuild's options, relative to this folder (tsup.config.js builds it; a test weighs it).
 *
 * @type {import('esbuild').BuildOptions}
 */
export const browserBuild = {
  entryPoints: ['src/index.ts'],
  outfile: 'dist/browser.js',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  external: ['livekit-client'],
  tsconfig: 'tsconfig.json',
  logLevel: 'warning',
};
