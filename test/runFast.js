#!/usr/bin/env node
// SPDX-License-Identifier: GPL-3.0-or-later
// `npm run test:fast`: the tests a developer runs on every change. A test file's name says its
// tier: `*.slow.test.ts` needs WebRTC (the test network namespace), a browser, child processes
// or the face networks (photo avatars: seconds per picture), or took over 10 s in a whole run
// (test/fileDurations.json), `*.postgres.test.ts` a PostgreSQL server; every other `*.test.ts`
// is fast (unit tests and short in-process HTTP tests: a real server and the embedded database
// in this process). test/architecture/tiers.test.ts holds the names to this. `npm test` runs
// every tier, and CI runs `npm test`.
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
// Without isolation: each worker imports the service's modules (hono, PGlite, zod, the media
// core) once for all its files instead of once per file, which was most of the tier's CPU (252
// CPU-s isolated, 155 without, the same 80 files and 450 tests in one run). A fast file must not
// rely on a fresh module graph: `vi.mock` does not reach a module that an earlier file loaded
// (speechOutputEnded.test.ts captures the log through the framework's logger instead), and
// `vi.resetModules` would reload every module for the files after it (faceRenderer.test.ts
// imports a fresh instance of the one module it needs, with a `?fresh` query). `npm test` and CI
// still run every file isolated.
process.exit(
  await runChild(['npx', 'vitest', 'run', '--project', 'embedded', '--no-isolate', ...files]),
);
