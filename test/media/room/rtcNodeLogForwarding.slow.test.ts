// SPDX-License-Identifier: GPL-3.0-or-later
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const probe = fileURLToPath(new URL('./rtcNodeLogProbe.ts', import.meta.url));

/**
 * Log records rtc-node's native side sent to JavaScript in a fresh process (see the probe), and
 * what the process printed to stderr.
 */
async function probeRun(
  bare: boolean,
  rustLog?: string,
): Promise<{ records: number; stderr: string }> {
  const env = { ...process.env };
  delete env.RUST_LOG;
  if (rustLog) env.RUST_LOG = rustLog;
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', probe, ...(bare ? ['bare'] : [])],
    { timeout: 60_000, env },
  );
  const last = stdout.trim().split('\n').at(-1) ?? '';
  return { records: (JSON.parse(last) as { records: number }).records, stderr };
}
const recordsSent = async (bare: boolean) => (await probeRun(bare)).records;

// Each record crosses the FFI as an event that the JavaScript thread decodes and rtc-node then
// drops (issue 47: libwebrtc's verbose log, a line per video frame, was most of a speaking
// avatar's JavaScript-thread CPU). A process that runs Visage's media core sends none.
describe("rtc-node's native log records", () => {
  it('reach JavaScript in a plain rtc-node process (what the probe detects)', async () => {
    expect(await recordsSent(true)).toBeGreaterThan(0);
  }, 90_000);

  it('do not reach JavaScript in a process running the media core', async () => {
    const { records, stderr } = await probeRun(false);
    expect(records).toBe(0);
    // Nor the terminal, unless asked for.
    expect(stderr).not.toContain('livekit');
  }, 90_000);

  it('go to stderr when RUST_LOG asks for them', async () => {
    const { records, stderr } = await probeRun(false, 'debug');
    expect(records).toBe(0);
    expect(stderr).toContain('initializing ffi server');
  }, 90_000);
});
