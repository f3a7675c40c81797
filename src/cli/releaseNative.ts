// SPDX-License-Identifier: GPL-3.0-or-later
import { dispose } from '@livekit/rtc-node';

/**
 * rtc-node's native runtime is process-wide and keeps the event loop alive: a command that used
 * it (the media core) releases it as its very last step, so the process can exit.
 */
export async function releaseNativeRuntime(): Promise<void> {
  await dispose().catch(() => undefined);
}
