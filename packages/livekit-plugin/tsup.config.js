// SPDX-License-Identifier: Apache-2.0
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';

// The plugin package is built from src/plugin (which stays where it is: the service's tests and
// examples import it from there). What it takes from src/client and src/api is NOT bundled: it
// comes from the client package, so an agent has one VisageClient and one set of error classes
// (`instanceof` works across both packages). src/version.ts becomes this package's version, and
// the one other file outside src/plugin it may use, src/rtcNodeLog.ts, is bundled
// (test/architecture/layers.test.ts holds src/plugin to these).

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));

/** Source files answered by another package, and what they become. */
const FROM_CLIENT_PACKAGE = {
  [`${SRC}client/index.ts`]: '@visage-avatar/client',
  [`${SRC}api/index.ts`]: '@visage-avatar/client/api',
};
const VERSION_FILE = `${SRC}version.ts`;

/** The source a relative import names (`./x.js` is written for `./x.ts`). */
function sourceOf(importer, path) {
  return resolve(dirname(importer), path).replace(/\.js$/, '.ts');
}

const clientFromItsPackage = {
  name: 'visage-client-from-its-package',
  setup(build) {
    build.onResolve({ filter: /^\.\.?\// }, ({ importer, path }) => {
      const source = sourceOf(importer, path);
      const external = FROM_CLIENT_PACKAGE[source];
      if (external) return { path: external, external: true };
      if (source === VERSION_FILE) return { path: 'version', namespace: 'visage-plugin-version' };
      if (source.startsWith(`${SRC}client/`) || source.startsWith(`${SRC}api/`)) {
        return {
          errors: [
            {
              text: `${importer} imports ${path}: import src/client and src/api through their index.ts (the client package's entries)`,
            },
          ],
        };
      }
      return undefined;
    });
    build.onLoad({ filter: /.*/, namespace: 'visage-plugin-version' }, () => ({
      contents: `export const VERSION = ${JSON.stringify(version)};`,
      loader: 'js',
    }));
  },
};

export default defineConfig({
  entry: { index: '../../src/plugin/index.ts' },
  tsconfig: '../../tsconfig.json',
  // Both module systems, as @livekit/agents ships: an ES module (`import`) and CommonJS (`require`,
  // `index.cjs` with `index.d.cts`), so that a project `npm init` made (CommonJS) loads it too.
  // The shims give src/rtcNodeLog.ts its `import.meta.url` in the CommonJS build.
  format: ['esm', 'cjs'],
  shims: true,
  target: 'node20',
  platform: 'node',
  removeNodeProtocol: false,
  esbuildPlugins: [clientFromItsPackage],
  // The declarations (.d.ts and .d.cts) take the same two entries from the client package (see
  // rewriteDeclarations.js).
  dts: true,
  external: [/\/src\/client\/index\.ts$/, /\/src\/api\/index\.ts$/],
  sourcemap: false,
  clean: true,
});
