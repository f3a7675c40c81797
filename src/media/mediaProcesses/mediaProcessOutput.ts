// SPDX-License-Identifier: GPL-3.0-or-later
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';

/**
 * OpenH264, inside rtc-node, prints this on every new encoder: libwebrtc hands it frames before it
 * has a frame rate to report. It says nothing to an operator, so it is logged at debug.
 */
const OPENH264_FRAMERATE_NOTICE =
  /^\[OpenH264\] this = 0x[0-9a-fx]+, Warning:\s*Actual input framerate [\d.]+ is different from framerate in setting/;

/** Longer lines are cut: a runaway native print must not make one huge log record. */
const MAX_LINE_CHARS = 2_000;

/**
 * A media process's stdout or stderr as log records of the API process, one per line, instead of
 * raw text beside the JSON lines. The process logs over IPC; what arrives here is what its native
 * code or Node itself printed: a codec's notice, a crash's last words (warn).
 */
export function logMediaProcessOutput(
  stream: Readable,
  log: Logger,
  name: 'stdout' | 'stderr',
): void {
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  lines.on('line', (raw) => {
    const line = raw.trimEnd();
    if (line.length === 0) return;
    const text = line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line;
    if (OPENH264_FRAMERATE_NOTICE.test(line)) log.debug({ [name]: text }, 'media process output');
    else log.warn({ [name]: text }, 'media process output');
  });
}
