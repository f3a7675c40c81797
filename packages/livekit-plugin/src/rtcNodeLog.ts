// SPDX-License-Identifier: Apache-2.0
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * `@livekit/rtc-node` logs through its own pino logger (`lk-rtc`) at `debug` unless NODE_ENV is
 * `production`: every connection then prints JSON debug lines into a user's terminal. Visage sets
 * it to `warn` (or `$VISAGE_RTC_LOG_LEVEL`), so a user sees only what concerns them unless they
 * ask for more.
 *
 * rtc-node does not export its logger; it is the `log` of its `dist/log.cjs`, the module its
 * entry point loads, reached here by path (the same instance: Node caches modules by path).
 * Should a later rtc-node move it, nothing breaks: its lines just stay as they were.
 */
export function applyRtcNodeLogLevel(level = process.env.VISAGE_RTC_LOG_LEVEL ?? 'warn'): void {
  try {
    const require = createRequire(import.meta.url);
    const entry = require.resolve('@livekit/rtc-node');
    const logModule = require(join(dirname(entry), 'log.cjs')) as { log?: { level: string } };
    if (logModule.log) logModule.log.level = level;
  } catch {
    // Not installed (a backend that only uses the client) or laid out differently.
  }
}
