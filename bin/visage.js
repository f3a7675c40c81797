#!/usr/bin/env node
// SPDX-License-Identifier: GPL-3.0-or-later
// Thin launcher: the CLI is built by `npm ci` (the `prepare` script runs tsup).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// A service binary: production defaults (rtc-node, for one, logs debug lines otherwise).
process.env.NODE_ENV ??= 'production';

const main = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
if (!existsSync(main)) {
  console.error('visage: dist/ is missing; run `npm ci` (or `npm run build`) first.');
  process.exit(1);
}
const { run } = await import(main);
process.exitCode = await run(process.argv.slice(2));
// Everything was closed; if a stray handle still holds the loop, do not hang on it.
setTimeout(() => process.exit(), 3000).unref();
