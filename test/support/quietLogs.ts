// vitest setup file: test output shows test results, not rtc-node's debug lines
// (VISAGE_RTC_LOG_LEVEL=debug brings them back).
import { applyRtcNodeLogLevel } from '../../src/rtcNodeLog.js';

applyRtcNodeLogLevel();
