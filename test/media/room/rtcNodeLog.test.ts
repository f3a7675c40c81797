// SPDX-License-Identifier: GPL-3.0-or-later
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyRtcNodeLogLevel as ofThePlugin } from '../../../packages/livekit-plugin/src/rtcNodeLog.js';
import { applyRtcNodeLogLevel as ofTheService } from '../../../src/rtcNodeLog.js';

/** rtc-node's own logger, the instance its entry point uses. */
function rtcNodeLogger(): { level: string; name?: string } {
  const require = createRequire(import.meta.url);
  const entry = require.resolve('@livekit/rtc-node');
  require(entry); // load rtc-node itself first: its logger must be the one found
  return (require(join(dirname(entry), 'log.cjs')) as { log: { level: string } }).log;
}

// The service (its media processes, the examples) and the plugin (an agent's process) each
// quieten rtc-node, the plugin package from its own copy (it may not import the service).
describe.each([
  ['the service', ofTheService],
  ['the plugin', ofThePlugin],
])("rtc-node's log level, as %s sets it", (_, applyRtcNodeLogLevel) => {
  it('is warn by default (no debug JSON in the output) and follows VISAGE_RTC_LOG_LEVEL', () => {
    const logger = rtcNodeLogger();
    logger.level = 'debug'; // what rtc-node sets outside NODE_ENV=production
    applyRtcNodeLogLevel();
    expect(logger.level).toBe(process.env.VISAGE_RTC_LOG_LEVEL ?? 'warn');
    applyRtcNodeLogLevel('debug');
    expect(logger.level).toBe('debug');
    applyRtcNodeLogLevel('warn');
    expect(logger.level).toBe('warn');
  });
});
