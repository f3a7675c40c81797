import { defineConfig } from 'tsup';

// The client package is built from the repository's sources (src/client and the wire contract
// in src/api), which the service shares: the folders stay where they are, this package bundles
// them. Its dependencies (undici, zod) stay external; nothing else may be imported
// (test/architecture/layers.test.ts holds src/client and src/api to that).
export default defineConfig({
  entry: {
    index: '../../src/client/index.ts',
    api: '../../src/api/index.ts',
  },
  tsconfig: '../../tsconfig.json',
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  removeNodeProtocol: false,
  dts: true,
  sourcemap: false,
  clean: true,
  splitting: true,
});
