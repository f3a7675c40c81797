// tsup leaves the declarations' imports of src/client and src/api as paths into the repository
// (they are external: the client package answers them). This names the package instead, and
// fails the build if the declarations still point at any file outside the package.
import { readFileSync, writeFileSync } from 'node:fs';

const FILE = new URL('./dist/index.d.ts', import.meta.url);
const PACKAGE_OF = { client: '@visage-avatar/client', api: '@visage-avatar/client/api' };

const rewritten = readFileSync(FILE, 'utf8').replace(
  /from '(?:\.\.?\/)+(?:src\/)?(client|api)\/index\.[jt]s'/g,
  (_, folder) => `from '${PACKAGE_OF[folder]}'`,
);
const stray = rewritten.match(/from '\.\.?\/[^']*'/g);
if (stray) {
  throw new Error(`dist/index.d.ts still imports files outside the package: ${stray.join(', ')}`);
}
writeFileSync(FILE, rewritten);
