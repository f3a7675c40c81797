// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Errors raised while turning uploaded bytes into PCM. The `code` matches the API error code the
 * HTTP layer answers with (docs/api.md, Errors): 415 `unsupported_audio` when the bytes are not a
 * recognised audio format at all, 422 `unreadable_audio` when they are recognised but cannot be
 * decoded (corrupt, truncated, empty), 422 `clip_too_long` past the caller's duration limit.
 */
export type AudioDecodeErrorCode = 'unsupported_audio' | 'unreadable_audio' | 'clip_too_long';

export abstract class AudioDecodeError extends Error {
  abstract readonly code: AudioDecodeErrorCode;
  /** HTTP status the API maps this error to. */
  abstract readonly status: 415 | 422;
}

/** Not a recognised audio format (no known magic bytes, or an unsupported raw PCM type). */
export class UnsupportedAudioError extends AudioDecodeError {
  readonly code = 'unsupported_audio' as const;
  readonly status = 415 as const;
  override readonly name = 'UnsupportedAudioError';
}

/** A recognised audio format whose content cannot be decoded (corrupt, truncated or empty). */
export class UnreadableAudioError extends AudioDecodeError {
  readonly code = 'unreadable_audio' as const;
  readonly status = 422 as const;
  override readonly name = 'UnreadableAudioError';
}

/**
 * The audio is longer than the caller's `maxDurationMs` (422 `clip_too_long`). Raised while
 * decoding, before the whole file is in memory, so a small file that expands to hours of audio
 * cannot exhaust memory.
 */
export class AudioTooLongError extends AudioDecodeError {
  readonly code = 'clip_too_long' as const;
  readonly status = 422 as const;
  override readonly name = 'AudioTooLongError';
  constructor(
    readonly limitMs: number,
    message = `audio is longer than ${(limitMs / 1000).toFixed(1)} s`,
  ) {
    super(message);
  }
}
