// SPDX-License-Identifier: GPL-3.0-or-later
import { resolve } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { browserBuild } from '../../packages/web/browserBuild.js';
import { expect, it } from 'vitest';

/**
 * What `@visage-avatar/web` weighs in a page: its `browser.js` (packages/web/tsup.config.js)
 * and any page a bundler makes carry it with the face stream's reader (`@visage-avatar/client/
 * face`) and the zod inside that. On zod's classic build (the whole wire contract's) that was
 * 455 kB minified of 460; the reader is on zod's small build, and imports nothing of the
 * contract that needs the classic one.
 */
it('the browser package, bundled as a page bundles it, is small and carries no classic zod', async () => {
  // As tsup.config.js builds dist/browser.js, into memory, with the inputs' sizes.
  const result = await build({
    ...browserBuild,
    absWorkingDir: resolve('packages/web'),
    outfile: undefined,
    outdir: 'dist',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const meta: Metafile = result.metafile!;
  const output = Object.values(meta.outputs)[0]!;
  const inputs = Object.entries(output.inputs);
  const zodBytes = inputs
    .filter(([path]) => path.includes('node_modules/zod/'))
    .reduce((sum, [, input]) => sum + input.bytesInOutput, 0);
  console.log(
    `@visage-avatar/web bundled: ${(output.bytes / 1024).toFixed(1)} kB minified, zod ${(zodBytes / 1024).toFixed(1)} kB`,
  );
  // The reader's own modules come in, from the face entry's sources.
  expect(inputs.map(([path]) => path)).toEqual(
    expect.arrayContaining([expect.stringMatching(/client\/src\/api\/faceStream\.ts$/)]),
  );
  expect(
    inputs.filter(([path]) => /node_modules\/zod\/(v4\/classic|v4\/locales)\//.test(path)),
  ).toEqual([]);
  expect(zodBytes).toBeLessThan(40 * 1024);
  expect(output.bytes).toBeLessThan(64 * 1024);
  // Nothing left to import: livekit-client is the page's (the package works on the page's own
  // Room, and names its types only).
  expect(output.imports).toEqual([]);
}, 30_000);
