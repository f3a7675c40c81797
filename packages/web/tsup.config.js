// SPDX-License-Identifier: Apache-2.0
import { build } from 'esbuild';
import { defineConfig } from 'tsup';
import { browserBuild } from './browserBuild.js';

// The browser package (src/). @visage-avatar/client (the face stream's format and FaceTimeline)
// and livekit-client (a peer: the page's own Room) stay imports, so a page bundles one copy of
// each. Both module systems, as the other packages ship. `composition` (how a frame is made from
// the atlas) is its own entry: the server's renderer uses it too, with no browser code.
//
// And `browser.js` (browserBuild.js), once the rest is built.
export default defineConfig({
  entry: { index: 'src/index.ts', composition: 'src/composition.ts' },
  format: ['esm', 'cjs'],
  target: 'es2022',
  platform: 'browser',
  dts: true,
  sourcemap: false,
  clean: true,
  onSuccess: async () => {
    await build(browserBuild);
  },
});
