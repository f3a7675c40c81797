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
];

export function createLogger(options: { level?: string; name?: string } = {}): Logger {
  return pino({
    name: options.name ?? 'visage',
    level: options.level ?? 'info',
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  });
}
