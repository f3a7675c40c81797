#!/usr/bin/env node
// SPDX-License-Identifier: GPL-3.0-or-later
// `npm run bench`: runs every bench/*.bench.ts with tsx, one after another, and prints their
// tables. Benchmarks that use WebRTC need a non-loopback address, so when run as root this creates
// a private network namespace (test/netns.js, as `npm test` does) and runs them inside it with
// VISAGE_TEST_ADDRESS set; elsewhere it says loudly that they run without one (and those that
// need it refuse to start). `npm run bench -- devserver` runs only the files whose name matches;
// `--quick` runs one round of each latency figure and short density runs (BENCH_QUICK=1).
// BENCH_JSON=file writes every figure of the run as one JSON object there (each benchmark
// appends its figures to a scratch file through bench/support/figures.ts; merged at the end).
import { runChild } from '../test/runChild.js';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { NETNS_ADDRESSES, openNamespace } from '../test/netns.js';

const BENCH_DIR = 'bench';
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const filters = args.filter((a) => a !== '--quick');
const files = readdirSync(BENCH_DIR)
  .filter((name) => name.endsWith('.bench.ts'))
  .filter((name) => filters.length === 0 || filters.some((f) => name.includes(f)))
  .sort()
  .map((name) => join(BENCH_DIR, name));
if (files.length === 0) {
  console.error(`no bench/*.bench.ts files${filters.length ? ` match ${filters.join(', ')}` : ''}`);
  process.exit(1);
}

const netns = openNamespace('visage-bench-');
let prefix = [];
const scratch = mkdtempSync(join(tmpdir(), 'visage-bench-'));
// Traversable by others, as /tmp is: the cluster bench's PostgreSQL runs as the user `postgres`.
chmodSync(scratch, 0o755);
const figuresFile = join(scratch, 'figures.jsonl');
writeFileSync(figuresFile, '');
// Every temp dir a bench makes (data directories of the nodes it starts) lands in `scratch`,
// removed at the end.
let env = {
  TMPDIR: scratch,
  NODE_ENV: 'production',
  BENCH_FIGURES_FILE: figuresFile,
  ...(quick ? { BENCH_QUICK: '1' } : {}),
};
if (netns.name) {
  console.log(`== network namespace ${netns.name}: ${NETNS_ADDRESSES.join(', ')} (isolated)`);
  prefix = ['ip', 'netns', 'exec', netns.name];
  env = { ...env, VISAGE_TEST_NETNS: netns.name, VISAGE_TEST_ADDRESS: NETNS_ADDRESSES[0] };
} else {
  const banner = '!'.repeat(78);
  console.error(`${banner}\n!! No network namespace: ${netns.reason}.`);
  console.error(
    `!! WebRTC benchmarks cannot run; run \`npm run bench\` as root on Linux.\n${banner}`,
  );
  env = { ...env, VISAGE_TEST_NETNS_UNAVAILABLE: netns.reason };
}

function run(file) {
  const args = [...prefix, 'npx', 'tsx', file];
  console.log(`\n== ${file}: ${args.join(' ')}`);
  return runChild(args, env);
}

const failed = [];
for (const file of files) {
  const code = await run(file);
  if (code !== 0) failed.push(`${file} (exit ${code})`);
}
netns.close?.();
const figures = Object.fromEntries(
  readFileSync(figuresFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .map(({ section, figures }) => [section, figures]),
);
rmSync(scratch, { recursive: true, force: true });
if (process.env.BENCH_JSON) {
  const out = resolve(process.env.BENCH_JSON);
  const run = {
    at: new Date().toISOString(),
    quick,
    files: files,
    failed,
    figures,
  };
  writeFileSync(out, `${JSON.stringify(run, null, 2)}\n`);
  console.log(`\n== figures written to ${out}`);
}
if (failed.length) {
  console.error(`\n== failed: ${failed.join(', ')}`);
  process.exit(1);
}
