// SPDX-License-Identifier: Apache-2.0
import { build } from 'esbuild';
import { defineConfig } from 'tsup';

// The browser package (src/). @visage-avatar/client (the face stream's format and FaceTimeline)
// and livekit-client (a peer: the page's own Room) stay imports, so a page bundles one copy of
// each. Both module systems, as the other packages ship. `composition` (how a frame is made from
// the atlas) is its own entry: the server's renderer uses it too, with no browser code.
//
// And `browser.js`, one file for a page with no bundler (an import map, or a CDN): the package
// with @visage-avatar/client/face and zod's small build inside, minified. It imports nothing:
// livekit-client is the page's (the package works on the page's Room and names its types only).
export default defineConfig({
  entry: { index: 'src/index.ts', composition: 'src/composition.ts' },
  format: ['esm', 'cjs'],
  target: 'es2022',
  platform: 'browser',
  dts: true,
  sourcemap: false,
  clean: true,
  onSuccess: async () => {
    await build({
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
    });
  },
});
