// SPDX-License-Identifier: Apache-2.0
import { defineConfig } from 'tsup';

// The client (src/index.ts), the wire contract (src/api, the `./api` entry) and the face stream's
// reader alone (`./face`, for browsers: zod's small build only). Its dependencies
// (undici, zod) stay external. Both module systems, as @livekit/agents ships: an ES module
// (`import`) and CommonJS (`require`, `index.cjs` with `index.d.cts`), so that a project
// `npm init` made (CommonJS) loads it too.
export default defineConfig({
  entry: { index: 'src/index.ts', api: 'src/api/index.ts', face: 'src/face.ts' },
  format: ['esm', 'cjs'],
  target: 'node20',
  platform: 'node',
  removeNodeProtocol: false,
  dts: true,
  sourcemap: false,
  clean: true,
  splitting: true,
});
