// SPDX-License-Identifier: GPL-3.0-or-later
// Run by rtcNodeLogForwarding.slow.test.ts in a fresh process (rtc-node's native side starts once per
// process): starts rtc-node the way a media process does, or (`bare`) without Visage's media
// core loaded first, and prints how many log records rtc-node's native side sent to JavaScript.
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';

const bare = process.argv.includes('bare');
if (!bare) await import('../../../src/media/room/liveKitMediaCore.js');
const { VideoSource, dispose } = await import('@livekit/rtc-node');
const require = createRequire(import.meta.url);
const { FfiClient } = require(
  require.resolve('@livekit/rtc-node').replace(/index\.c?js$/, 'ffi_client.cjs'),
) as { FfiClient: { instance: NodeJS.EventEmitter } };
let records = 0;
FfiClient.instance.on('ffi_event', (event: { message: { case?: string; value?: unknown } }) => {
  if (event.message.case === 'logs') {
    records += (event.message.value as { records: unknown[] }).records.length;
  }
});
const source = new VideoSource(64, 64);
// livekit-ffi flushes its batch of records every second.
await sleep(2_500);
await source.close();
await dispose();
console.log(JSON.stringify({ records }));
