#!/usr/bin/env node
// SPDX-License-Identifier: GPL-3.0-or-later
// `npm run test:fast`: the tests a developer runs on every change, in a couple of minutes. Unit
// tests and in-process HTTP tests (a real server and the embedded database in this process);
// not the suites that need WebRTC (the test network namespace), a browser, PostgreSQL, child
// processes or the face networks (photo avatars: seconds per picture): `npm test` runs those
// too, and CI runs `npm test`. A file counts as slow when its
// source uses one of the markers below, so new suites fall into the right tier by themselves.
//   npm run test:fast                       every fast file
//   npm run test:fast -- test/server        the fast files under a folder (vitest filters)
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runChild } from './runChild.js';

const SLOW_MARKERS = [
  'support/network.js', // real WebRTC, inside the test network namespace
  'chromium', // a headless browser
  'node:child_process', // child processes (the CLI, agent workers)
  'startCli',
  'startAgentWorker',
  // face detection and recognition over real portraits
  'photoThreadPool',
  'portraitSet',
  'faceQuality',
  'faceModels',
];

function fastTestFiles(dir = 'test') {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...fastTestFiles(path));
    else if (entry.name.endsWith('.test.ts') && !entry.name.endsWith('.postgres.test.ts')) {
      const source = readFileSync(path, 'utf8');
      if (!SLOW_MARKERS.some((marker) => source.includes(marker))) found.push(path);
    }
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
