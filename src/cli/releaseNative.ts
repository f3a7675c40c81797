// SPDX-License-Identifier: GPL-3.0-or-later

/**
 * rtc-node's native runtime is process-wide and keeps the event loop alive: a command that used
 * it (the media core) releases it as its very last step, so the process can exit.
 */
export async function releaseNativeRuntime(): Promise<void> {
  // Imported here, not at the top: an API process whose media runs in media processes never
  // loads it during its start-up (a few hundred ms of CPU).
  const { dispose } = await import('@livekit/rtc-node');
  await dispose().catch(() => undefined);
}
