// SPDX-License-Identifier: GPL-3.0-or-later
// Finds Debian's `chromium`, installing it with apt-get when it is absent (root only). The tests
// run inside a network namespace that cannot reach a package mirror, so apt-get runs in the
// network namespace of the nearest ancestor process outside it (the test runner's shell).
import { spawnSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

function which(command: string): string | undefined {
  const result = spawnSync('which', [command], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() || undefined : undefined;
}

function netnsOf(pid: number | 'self'): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/net`);
  } catch {
    return undefined;
  }
}

function parentOf(pid: number | 'self'): number | undefined {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const ppid = Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]);
  return ppid > 0 ? ppid : undefined;
}

/** `nsenter` arguments that run a command in the network namespace outside ours, if any. */
function outsideNetns(): string[] {
  const own = netnsOf('self');
  for (let pid = parentOf('self'); pid !== undefined; pid = parentOf(pid)) {
    const ns = netnsOf(pid);
    if (ns && ns !== own) return ['nsenter', `--net=/proc/${pid}/ns/net`, '--'];
  }
  return [];
}

function run(command: string[]): boolean {
  console.log(`[browser test] running: ${command.join(' ')}`);
  const result = spawnSync(command[0]!, command.slice(1), {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  return result.status === 0;
}

/** Returns the path of chromium, installing the Debian package first when it is missing. */
export function ensureChromium(): string {
  const found = which('chromium');
  if (found) return found;
  if (process.getuid?.() !== 0) {
    throw new Error(
      'chromium is not installed and installing it needs root: run `apt-get install -y chromium`',
    );
  }
  console.log(
    '[browser test] chromium is not installed: installing it with `apt-get install -y chromium` as root',
  );
  const prefix = outsideNetns();
  const install = [...prefix, 'apt-get', 'install', '-y', 'chromium'];
  if (!run(install)) {
    // Stale or missing package lists: refresh them once and retry.
    if (!run([...prefix, 'apt-get', 'update']) || !run(install)) {
      throw new Error('apt-get install -y chromium failed (see the output above)');
    }
  }
  const installed = which('chromium');
  if (!installed) throw new Error('apt-get installed chromium but `which chromium` finds nothing');
  console.log(`[browser test] chromium installed at ${installed}`);
  return installed;
}

export interface ChromiumOptions {
  /**
   * An http:// origin the page may treat as secure: livekit-client needs a secure context
   * (crypto.randomUUID, getUserMedia), and the test pages are plain HTTP on a test address.
   */
  secureOrigin?: string;
  /** A fake camera and microphone (the page publishes its own tracks). */
  fakeDevices?: boolean;
}

/**
 * Headless chromium as every browser test runs it: no sandbox (root), no GPU, no QUIC, media
 * that plays without a gesture, no permission prompts (which also gives host ICE candidates
 * instead of mDNS names). `CHROMIUM_PATH` names another binary.
 */
export async function launchChromium(options: ChromiumOptions = {}): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? ensureChromium(),
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--use-fake-ui-for-media-stream',
      '--autoplay-policy=no-user-gesture-required',
      ...(options.fakeDevices ? ['--use-fake-device-for-media-stream'] : []),
      ...(options.secureOrigin
        ? [`--unsafely-treat-insecure-origin-as-secure=${options.secureOrigin}`]
        : []),
    ],
  });
}
