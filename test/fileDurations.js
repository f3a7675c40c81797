#!/usr/bin/env node
// SPDX-License-Identifier: GPL-3.0-or-later
// Keeps the per-file durations that vitest's file order uses (test/support/longestFirst.ts):
//   node test/fileDurations.js [.tmp/file-durations.json]
// reads what a whole `npm test` run wrote (test/support/fileDurations.ts, a reporter: each file's
// import, hooks and tests, `project:path`: seconds) and writes test/fileDurations.json, sorted.
// Refresh it after a run when files were added or got much slower or faster; a file it does not
// name is guessed (30 s in the slow tiers, 1 s in the fast).
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

const source = resolve(process.argv[2] ?? '.tmp/file-durations.json');
const seconds = JSON.parse(readFileSync(source, 'utf8'));
const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => a.localeCompare(b)));
writeFileSync('test/fileDurations.json', `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`test/fileDurations.json: ${Object.keys(sorted).length} entries`);
