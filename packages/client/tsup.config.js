// SPDX-License-Identifier: Apache-2.0
import { defineConfig } from 'tsup';

// The client package is built from the repository's sources (src/client and the wire contract
// in src/api), which the service shares: the folders stay where they are, this package bundles
// them. Its dependencies (undici, zod) stay external; nothing else may be imported
// (test/architecture/layers.test.ts holds src/client and src/api to that).
// Both module systems, as @livekit/agents ships: an ES module (`import`) and CommonJS (`require`,
// `index.cjs` with `index.d.cts`), so that a project `npm init` made (CommonJS) loads it too.
export default defineConfig({
  entry: {
    index: '../../src/client/index.ts',
    api: '../../src/api/index.ts',
  },
  tsconfig: '../../tsconfig.json',
  format: ['esm', 'cjs'],
  target: 'node20',
  platform: 'node',
  removeNodeProtocol: false,
  dts: true,
  sourcemap: false,
  clean: true,
  splitting: true,
});
