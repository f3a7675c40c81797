#!/usr/bin/env node
// SPDX-License-Identifier: GPL-3.0-or-later
// `npm test`: static checks, then every vitest suite.
//
// WebRTC suites need a non-loopback address (libwebrtc ignores loopback interfaces). When run as
// root with iproute2, this runner creates a private network namespace with a veth pair
// (10.213.0.1/24 and 10.213.0.2/24, both ends inside the namespace, `lo` up), runs vitest inside
// it and deletes it afterwards, also on failure or signal. Nothing in the namespace can reach
// the outside. Where that is impossible it says loudly which suites it could not run; with
// CI=true that is a failure.
import { spawnSync } from 'node:child_process';
import { runChild } from './runChild.js';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NETNS_ADDRESSES, openNamespace } from './netns.js';

const NETNS_PREFIX = 'visage-test-';
const WEBRTC_MARKER = 'support/network.js';

function step(name, cmd, args, env = {}) {
  console.log(`\n== ${name}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.status !== 0) {
    console.error(`\n== ${name} failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
}

/** Test files that need WebRTC: they use the network helper. */
function webrtcTestFiles(dir = 'test') {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...webrtcTestFiles(path));
    else if (
      entry.name.endsWith('.test.ts') &&
      readFileSync(path, 'utf8').includes(WEBRTC_MARKER)
    ) {
      found.push(path);
    }
  }
  return found;
}

const RESULTS_FILE = '.tmp/vitest-results.json';
/** Written by test/support/retriedTests.ts. */
const RETRIED_FILE = '.tmp/retried-tests.json';

function readRetried() {
  try {
    return JSON.parse(readFileSync(RETRIED_FILE, 'utf8'));
  } catch {
    return [];
  }
}

/** One plain closing line that any CI log reader understands: `Tests: N passed, N failed`. */
function printSummary() {
  try {
    const r = JSON.parse(readFileSync(RESULTS_FILE, 'utf8'));
    const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
    if (r.numFailedTests > 0) {
      console.log('\nLogs of the servers the tests started (one file per test file): .tmp/logs/');
    }
    const retried = readRetried();
    if (retried.length > 0) {
      console.log(`\nPassed only on a retry (${retried.length}; make them robust):`);
      for (const t of retried) console.log(`  ${t.file} > ${t.test}\n    first try: ${t.error}`);
    }
    console.log(
      `\nTests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`,
    );
  } catch {
    console.log('\n(no test results were written)');
  }
}

// Temp dirs of the whole run (servers' data directories, browser profiles) land here and go
// when the run ends, also when vitest is killed before its own teardown
// (test/support/scratchRoot.ts) removes them.
// Traversable by others, as /tmp is: the test PostgreSQL runs as the user `postgres`.
const scratch = mkdtempSync(join(tmpdir(), 'visage-test-run-'));
chmodSync(scratch, 0o755);

function runVitest(prefix, env) {
  const args = [
    ...prefix,
    'npx',
    'vitest',
    'run',
    '--reporter=default',
    '--reporter=json',
    '--reporter=./test/support/retriedTests.ts',
    '--reporter=./test/support/fileDurations.ts',
    `--outputFile.json=${RESULTS_FILE}`,
    ...process.argv.slice(2),
  ];
  console.log(`\n== tests: ${args.join(' ')}`);
  return runChild(args, { TMPDIR: scratch, ...env });
}

rmSync(RESULTS_FILE, { force: true });
rmSync(RETRIED_FILE, { force: true });
rmSync('.tmp/logs', { recursive: true, force: true });
step('format', 'npx', ['prettier', '--check', '.']);
step('lint', 'npx', ['eslint', '.']);
step('typecheck', 'npx', ['tsc', '--noEmit']);

const webrtcFiles = webrtcTestFiles();
const netns = openNamespace(NETNS_PREFIX);
const reason = netns.reason;
let code;
if (netns.name) {
  console.log(`\n== network namespace ${netns.name}: ${NETNS_ADDRESSES.join(', ')} (isolated)`);
  code = await runVitest(['ip', 'netns', 'exec', netns.name], {
    VISAGE_TEST_NETNS: netns.name,
    VISAGE_TEST_ADDRESS: NETNS_ADDRESSES[0],
  });
  netns.close();
}
if (reason) {
  const banner = '!'.repeat(78);
  console.error(`\n${banner}\n!! WebRTC tests cannot run here: ${reason}.`);
  console.error('!! Not run (they report as skipped, or fail with CI=true):');
  for (const file of webrtcFiles) console.error(`!!   ${file}`);
  console.error(`!! Run \`npm test\` as root on Linux with iproute2 to run them.\n${banner}`);
  code = await runVitest([], { VISAGE_TEST_NETNS_UNAVAILABLE: reason });
  if (process.env.CI === 'true' && code === 0) {
    console.error('\n== CI=true: WebRTC tests must run in CI; failing.');
    code = 1;
  }
}
rmSync(scratch, { recursive: true, force: true });
printSummary();
process.exit(code);
