#!/usr/bin/env node
// SPDX-License-Identifier: GPL-3.0-or-later
// `npm run test:fast`: the tests a developer runs on every change. A test file's name says its
// tier: `*.slow.test.ts` needs WebRTC (the test network namespace), a browser, child processes
// or the face networks (photo avatars: seconds per picture), `*.postgres.test.ts` a PostgreSQL
// server; every other `*.test.ts` is fast (unit tests and in-process HTTP tests: a real server
// and the embedded database in this process). `npm test` runs every tier, and CI runs `npm test`.
//   npm run test:fast                       every fast file
//   npm run test:fast -- test/server        the fast files under a folder (vitest filters)
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { runChild } from './runChild.js';

const SLOW = /\.(slow|postgres)\.test\.ts$/;

function fastTestFiles(dir = 'test') {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...fastTestFiles(path));
    else if (entry.name.endsWith('.test.ts') && !SLOW.test(entry.name)) found.push(path);
  }
  return found.sort();
}

const filters = process.argv.slice(2);
const files = fastTestFiles().filter(
  (file) => filters.length === 0 || filters.some((f) => file.includes(f)),
);
if (files.length === 0) {
  console.error(`test:fast: no fast test file matches ${filters.join(' ')}`);
  process.exit(1);
}
console.log(`== test:fast: ${files.length} files (npm test runs every file)`);
process.exit(await runChild(['npx', 'vitest', 'run', '--project', 'embedded', ...files]));
