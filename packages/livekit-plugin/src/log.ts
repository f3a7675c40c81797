// SPDX-License-Identifier: Apache-2.0
import { log } from '@livekit/agents';
import { applyRtcNodeLogLevel } from './rtcNodeLog.js';

// rtc-node's own debug lines stay out of the agent's output (see applyRtcNodeLogLevel).
applyRtcNodeLogLevel();

/**
 * The plugin's logger: a child of the agents framework's logger, so plugin lines share the
 * job's level, format and OpenTelemetry export. Resolved on each call because the framework
 * initialises its logger when the job starts, possibly after this module was imported.
 */
export function pluginLog(): ReturnType<typeof log> {
  return log().child({ plugin: 'visage' });
}
