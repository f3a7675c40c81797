// SPDX-License-Identifier: GPL-3.0-or-later
/** Runs the CLI from source, as bin/visage.js runs it from dist/. */
import { run } from '../../src/cli/main.js';

process.exitCode = await run(process.argv.slice(2));
setTimeout(() => process.exit(), 3000).unref();
