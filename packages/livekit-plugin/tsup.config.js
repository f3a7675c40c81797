// SPDX-License-Identifier: Apache-2.0
import { defineConfig } from 'tsup';

// The plugin (src/). What it takes from @visage-avatar/client stays an import of that package
// (a dependency, so external), so an agent has one VisageClient and one set of error classes
// (`instanceof` works across both packages).
export default defineConfig({
  entry: { index: 'src/index.ts' },
  // Both module systems, as @livekit/agents ships: an ES module (`import`) and CommonJS
  // (`require`, `index.cjs` with `index.d.cts`), so that a project `npm init` made (CommonJS)
  // loads it too. The shims give src/rtcNodeLog.ts its `import.meta.url` in the CommonJS build.
  format: ['esm', 'cjs'],
  shims: true,
  target: 'node20',
  platform: 'node',
  removeNodeProtocol: false,
  dts: true,
  sourcemap: false,
  clean: true,
});
