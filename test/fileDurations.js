#!/usr/bin/env node
// SPDX-License-Identifier: GPL-3.0-or-later
// Keeps the per-file durations that vitest's file order uses (test/support/longestFirst.ts):
//   node test/fileDurations.js [.tmp/vitest-results.json]
// reads the JSON report of a whole `npm test` run and writes test/fileDurations.json
// (`project:path`: seconds). Refresh it after a run when files were added or got much slower or
// faster; a file it does not name is guessed (30 s in the slow tiers, 1 s in the fast).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

const reportPath = resolve(process.argv[2] ?? '.tmp/vitest-results.json');
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
// The report sits in <checkout>/.tmp/; its paths are absolute in that checkout.
const root = dirname(dirname(reportPath));
const seconds = {};
for (const file of report.testResults) {
  const path = relative(root, file.name);
  const s = Math.round((file.endTime - file.startTime) / 100) / 10;
  // The report names no project: a file that runs in both (test/server/api.slow.test.ts) keeps its longer run.
  seconds[path] = Math.max(seconds[path] ?? 0, s);
}
const counts = {};
for (const file of report.testResults) counts[file.name] = (counts[file.name] ?? 0) + 1;
const durations = {};
for (const [path, s] of Object.entries(seconds).sort(([a], [b]) => a.localeCompare(b))) {
  const twice = counts[resolve(root, path)] > 1;
  if (twice || !/\.postgres\.test\.ts$/.test(path)) durations[`embedded:${path}`] = s;
  if (twice || /\.postgres\.test\.ts$/.test(path)) durations[`postgres:${path}`] = s;
}
writeFileSync('test/fileDurations.json', `${JSON.stringify(durations, null, 2)}\n`);
console.log(`test/fileDurations.json: ${Object.keys(durations).length} entries`);
