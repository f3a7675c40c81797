// SPDX-License-Identifier: GPL-3.0-or-later
// vitest setup file: test output shows test results, not logs. rtc-node's debug lines are off
// (VISAGE_RTC_LOG_LEVEL=debug brings them back); servers the tests start log to files under
// .tmp/logs/ (test/support/testLog.ts), and a failing test says which file.
import { afterEach } from 'vitest';
import { applyRtcNodeLogLevel } from '../../src/rtcNodeLog.js';
import { pointAtLogsOnFailure } from './testLog.js';

applyRtcNodeLogLevel();

afterEach((context) => {
  pointAtLogsOnFailure(context.task.result?.state === 'fail');
});
