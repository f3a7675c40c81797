// SPDX-License-Identifier: GPL-3.0-or-later
// A private network namespace for WebRTC tests and benchmarks (libwebrtc ignores loopback
// interfaces, so they need a non-loopback address, and their traffic must stay on this machine).
// Used by test/run.js (`npm test`) and bench/run.js (`npm run bench`).
//
// The namespace has a veth pair with both ends inside it (10.213.0.1/24 and 10.213.0.2/24) and
// `lo` up; nothing in it can reach the outside. Namespaces are named `<prefix><pid>` so that ones
// left behind by runs that were killed hard can be found and removed.
import { spawnSync } from 'node:child_process';

export const NETNS_ADDRESSES = ['10.213.0.1', '10.213.0.2'];

function quiet(cmd, args) {
  return spawnSync(cmd, args, { encoding: 'utf8' });
}

/** Why a namespace cannot be created here, or undefined when it can. */
export function netnsUnavailableReason() {
  if (process.platform !== 'linux')
    return `network namespaces need Linux (this is ${process.platform})`;
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    return 'not running as root (ip netns needs CAP_NET_ADMIN)';
  }
  const ip = quiet('ip', ['-V']);
  if (ip.error || ip.status !== 0) return 'the `ip` command (iproute2) is not installed';
  return undefined;
}

/** Removes `<prefix><pid>` namespaces whose process is gone. */
export function removeStaleNamespaces(prefix) {
  const list = quiet('ip', ['netns', 'list']);
  for (const line of (list.stdout ?? '').split('\n')) {
    const name = line.split(' ')[0];
    if (!name?.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length));
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

/** Creates the namespace; returns why it failed, or undefined. */
export function createNamespace(name) {
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

export function deleteNamespace(name) {
  quiet('ip', ['netns', 'del', name]);
}

/**
 * Creates `<prefix><this pid>` (after removing stale ones) and deletes it when this process
 * exits. Returns `{ name }`, or `{ reason }` when no namespace can be had here.
 */
export function openNamespace(prefix) {
  const unavailable = netnsUnavailableReason();
  if (unavailable) return { reason: unavailable };
  removeStaleNamespaces(prefix);
  const name = `${prefix}${process.pid}`;
  const failed = createNamespace(name);
  if (failed) return { reason: failed };
  const cleanup = () => deleteNamespace(name);
  process.on('exit', cleanup);
  return { name, close: cleanup };
}
