// SPDX-License-Identifier: GPL-3.0-or-later
import pino, { type Logger } from 'pino';

/** Paths pino blanks out wherever they appear: credentials never reach a log line. */
export const REDACTED_PATHS = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'secret',
  '*.secret',
  'apiSecret',
  '*.apiSecret',
  'token',
  '*.token',
  'participant_token',
  '*.participant_token',
  // The TTS providers' keys (TtsOptions: `tts.elevenlabs.apiKey`, or deeper in a media
  // process's init) wherever options are logged.
  'apiKey',
  '*.apiKey',
  '*.*.apiKey',
  '*.*.*.apiKey',
  '*.*.*.*.apiKey',
];

/** `destination`: where the JSON lines go (default stdout). */
export function createLogger(
  options: { level?: string; name?: string; destination?: pino.DestinationStream } = {},
): Logger {
  const settings = {
    name: options.name ?? 'visage',
    level: options.level ?? 'info',
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
