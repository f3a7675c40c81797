/**
 * Errors raised while turning uploaded bytes into PCM. The `code` matches the API error code the
 * HTTP layer answers with (API-DECISIONS.md): 415 `unsupported_audio` when the bytes are not a
 * recognised audio format at all, 422 `unreadable_audio` when they are recognised but cannot be
 * decoded (corrupt, truncated, empty).
 */
export type AudioDecodeErrorCode = 'unsupported_audio' | 'unreadable_audio';

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
