// SPDX-License-Identifier: GPL-3.0-or-later
import { createRequire } from 'node:module';

type Initialize = (callback: (data: Uint8Array) => void, captureLogs: boolean, sdk: string) => void;

/**
 * Keeps the native LiveKit library (livekit-ffi under `@livekit/rtc-node`) from forwarding its
 * logs to JavaScript. rtc-node starts it with `captureLogs: true`, and then every record of every
 * level is sent across: libwebrtc's verbose log (a line per captured video frame, a hex dump of
 * every SCTP packet, ICE checks) and the Rust crates' trace lines, about 100 records a second per
 * connection, each formatted, batched, encoded, and decoded again on the JavaScript thread
 * (`FfiEvent.fromBinary`) for rtc-node to drop: it has no consumer for them. Measured with one
 * speaking avatar: that was most of the media process's JavaScript-thread CPU (issue 47).
 * Without capture, livekit-ffi hands its records to env_logger, which prints to stderr what
 * `RUST_LOG` selects; left unset, it is `off` while livekit-ffi starts (env_logger reads it then),
 * so that by default the output stays as before: nothing of the native side's.
 *
 * The switch is the second argument of the binding's `livekitInitialize`, which rtc-node's
 * FfiClient calls once, on first use, through the bindings module's exports object: so this
 * must run before the process creates its first Room, source or track. Answers whether it took
 * effect (false when rtc-node was already started, or is laid out differently: then nothing
 * changes).
 */
export function stopRtcNodeLogForwarding(): boolean {
  try {
    const require = createRequire(import.meta.url);
    // The bindings as rtc-node itself resolves them (its own dependency).
    const rtcNode = require.resolve('@livekit/rtc-node');
    const bindings = createRequire(rtcNode)('@livekit/rtc-ffi-bindings') as {
      livekitInitialize?: Initialize & { visageNoLogs?: true };
    };
    const started = (globalThis as { _ffiClientInstance?: unknown })._ffiClientInstance;
    const initialize = bindings.livekitInitialize;
    if (started !== undefined || typeof initialize !== 'function') return false;
    if (initialize.visageNoLogs) return true;
    const quiet: Initialize & { visageNoLogs?: true } = (callback, _captureLogs, sdk) => {
      const unset = process.env.RUST_LOG === undefined;
      if (unset) process.env.RUST_LOG = 'off';
      try {
        initialize(callback, false, sdk);
      } finally {
        if (unset) delete process.env.RUST_LOG;
      }
    };
    quiet.visageNoLogs = true;
    bindings.livekitInitialize = quiet;
    return true;
  } catch {
    return false;
  }
}
