import {
  AudioDecodeError,
  decodeAudio,
  type AudioFormat,
  type DecodedAudio,
} from '../media/audio/index.js';
import { ApiError } from './apiError.js';
import type { Limits } from './config.js';

/** Builds the media core's speaker profile from a decoded reference clip. */
export type VoiceAnalyzer = (clip: DecodedAudio) => Promise<unknown>;

/**
 * Decodes caller-supplied audio and maps decoding failures to the API's codes (415 not audio,
 * 422 corrupt).
 */
export async function decodeOrReject(
  bytes: Uint8Array,
  contentType: string | undefined,
  maxDurationMs: number,
): Promise<DecodedAudio> {
  try {
    // The limit is enforced while decoding: a small file that expands to hours stops early.
    return await decodeAudio(bytes, { contentType, maxDurationMs });
  } catch (err) {
    if (err instanceof AudioDecodeError) throw new ApiError(err.code, err.message);
    throw err;
  }
}

/** A reference clip must be 1 s to 5 min long (defaults; see Limits). */
export function checkClipLength(clip: DecodedAudio, limits: Limits): void {
  if (clip.durationMs < limits.clipMinMs) {
    throw new ApiError(
      'clip_too_short',
      `The clip is ${(clip.durationMs / 1000).toFixed(2)} s long; at least ${limits.clipMinMs / 1000} s is needed.`,
    );
  }
  if (clip.durationMs > limits.clipMaxMs) {
    throw new ApiError(
      'clip_too_long',
      `The clip is ${(clip.durationMs / 1000).toFixed(1)} s long; at most ${limits.clipMaxMs / 1000} s is accepted.`,
    );
  }
}

const CONTENT_TYPES: Record<AudioFormat, string> = {
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  ogg: 'audio/ogg',
  webm: 'audio/webm',
  m4a: 'audio/mp4',
  flac: 'audio/flac',
  pcm: 'audio/L16',
};

export function contentTypeOf(format: AudioFormat): string {
  return CONTENT_TYPES[format];
}
