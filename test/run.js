#!/usr/bin/env node
// `npm test`: static checks, then every vitest suite.
//
// WebRTC suites need a non-loopback address (libwebrtc ignores loopback interfaces). When run as
// root with iproute2, this runner creates a private network namespace with a veth pair
// (10.213.0.1/24 and 10.213.0.2/24, both ends inside the namespace, `lo` up), runs vitest inside
// it and deletes it afterwards, also on failure or signal. Nothing in the namespace can reach
// the outside. Where that is impossible it says loudly which suites it could not run; with
// CI=true that is a failure.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const NETNS_PREFIX = 'visage-test-';
const NETNS_ADDRESSES = ['10.213.0.1', '10.213.0.2'];
const WEBRTC_MARKER = 'support/network.js';

function step(name, cmd, args, env = {}) {
  console.log(`\n== ${name}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.status !== 0) {
    console.error(`\n== ${name} failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
}

function quiet(cmd, args) {
  return spawnSync(cmd, args, { encoding: 'utf8' });
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

/** Why a namespace cannot be created here, or undefined when it can. */
function netnsUnavailableReason() {
  if (process.platform !== 'linux')
    return `network namespaces need Linux (this is ${process.platform})`;
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    return 'not running as root (ip netns needs CAP_NET_ADMIN)';
  }
  const ip = quiet('ip', ['-V']);
  if (ip.error || ip.status !== 0) return 'the `ip` command (iproute2) is not installed';
  return undefined;
}

/** Removes namespaces left behind by runs that were killed hard. */
function removeStaleNamespaces() {
  const list = quiet('ip', ['netns', 'list']);
  for (const line of (list.stdout ?? '').split('\n')) {
    const name = line.split(' ')[0];
    if (!name?.startsWith(NETNS_PREFIX)) continue;
    const pid = Number(name.slice(NETNS_PREFIX.length));
    let alive = false;
    try {
      process.kill(pid, 0);
      alive = true;
    } catch {
      alive = false;
    }
    if (!alive) quiet('ip', ['netns', 'del', name]);
  }
}

function createNamespace(name) {
  const commands = [
    ['netns', 'add', name],
    ['-n', name, 'link', 'add', 'veth0', 'type', 'veth', 'peer', 'name', 'veth1'],
    ['-n', name, 'addr', 'add', `${NETNS_ADDRESSES[0]}/24`, 'dev', 'veth0'],
    ['-n', name, 'addr', 'add', `${NETNS_ADDRESSES[1]}/24`, 'dev', 'veth1'],
    ['-n', name, 'link', 'set', 'lo', 'up'],
    ['-n', name, 'link', 'set', 'veth0', 'up'],
    ['-n', name, 'link', 'set', 'veth1', 'up'],
  ];
  for (const args of commands) {
    const r = quiet('ip', args);
    if (r.status !== 0) {
      quiet('ip', ['netns', 'del', name]);
      return `ip ${args.join(' ')} failed: ${(r.stderr || r.error?.message || '').trim()}`;
    }
  }
  return undefined;
}

function runVitest(prefix, env) {
  const args = [...prefix, 'npx', 'vitest', 'run', ...process.argv.slice(2)];
  console.log(`\n== tests: ${args.join(' ')}`);
  return new Promise((resolve) => {
    const child = spawn(args[0], args.slice(1), {
      stdio: 'inherit',
      env: { ...process.env, ...env },
    });
    const forward = (signal) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('exit', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

step('format', 'npx', ['prettier', '--check', '.']);
step('lint', 'npx', ['eslint', '.']);
step('typecheck', 'npx', ['tsc', '--noEmit']);

const webrtcFiles = webrtcTestFiles();
let reason = netnsUnavailableReason();
let code;
if (!reason) {
  removeStaleNamespaces();
  const name = `${NETNS_PREFIX}${process.pid}`;
  reason = createNamespace(name);
  if (!reason) {
    const cleanup = () => quiet('ip', ['netns', 'del', name]);
    process.on('exit', cleanup);
    console.log(`\n== network namespace ${name}: ${NETNS_ADDRESSES.join(', ')} (isolated)`);
    code = await runVitest(['ip', 'netns', 'exec', name], {
      VISAGE_TEST_NETNS: name,
      VISAGE_TEST_ADDRESS: NETNS_ADDRESSES[0],
    });
    cleanup();
  }
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
process.exit(code);
