// SPDX-License-Identifier: Apache-2.0
// tsup leaves the declarations' imports of src/client and src/api as paths into the repository
// (they are external: the client package answers them). This names the package instead, in the
// ES module's and the CommonJS build's declarations, and fails the build if either still points
// at any file outside the package.
//
// In the CommonJS declarations, `@livekit/rtc-node` is imported as the ES module's types: those
// are the ones @livekit/agents' declarations use in a CommonJS project as well (its .d.cts
// re-export its .d.ts files), and rtc-node's CommonJS types are other classes to TypeScript
// ("separate declarations of a private property"), so `avatar.start(session, ctx.room)` would
// not type check.
import { readFileSync, writeFileSync } from 'node:fs';

const FILES = ['index.d.ts', 'index.d.cts'];
const PACKAGE_OF = { client: '@visage-avatar/client', api: '@visage-avatar/client/api' };

for (const name of FILES) {
  const file = new URL(`./dist/${name}`, import.meta.url);
  const rewritten = readFileSync(file, 'utf8').replace(
    /from '(?:\.\.?\/)+(?:src\/)?(client|api)\/index\.[jt]s'/g,
    (_, folder) => `from '${PACKAGE_OF[folder]}'`,
  );
  const withAgentsRtcNode = name.endsWith('.d.cts')
    ? rewritten.replace(
        /^import \{([^}]*)\} from '@livekit\/rtc-node';$/m,
        (_, names) =>
          `import type {${names}} from '@livekit/rtc-node' with { 'resolution-mode': 'import' };`,
      )
    : rewritten;
  const stray = withAgentsRtcNode.match(/from '\.\.?\/[^']*'/g);
  if (stray) {
    throw new Error(`dist/${name} still imports files outside the package: ${stray.join(', ')}`);
  }
  if (name.endsWith('.d.cts') && /from '@livekit\/rtc-node';/.test(withAgentsRtcNode)) {
    throw new Error(`dist/${name} imports @livekit/rtc-node's CommonJS types`);
  }
  writeFileSync(file, withAgentsRtcNode);
}
