// SPDX-License-Identifier: GPL-3.0-or-later
import { AudioDecodeError, type AudioFormat, type DecodedAudio } from '../../media/audio/index.js';
import { audioThreadPool, speechThreadPool } from '../../media/audioThreads/index.js';
import { AssetError } from './assetError.js';
import type { Limits } from '../config.js';

/** Makes a voice from a decoded reference clip (and the file as uploaded): its engine and the
 * JSON that engine derived, stored with the voice. */
export type VoiceAnalyzer = (
  clip: DecodedAudio,
  bytes: Uint8Array,
  name: string,
) => Promise<{ engine: string; profile: unknown }>;

/**
 * Decodes caller-supplied audio and maps decoding failures to the API's codes (415 not audio,
 * 422 corrupt). Decoding runs on the audio thread pool: a hostile file (a header declaring
 * 65,535 channels, a huge data size) is refused from its header, and whatever gets past that is
 * bounded in memory and time there, never on the event loop.
 */
export async function decodeOrReject(
  bytes: Uint8Array,
  contentType: string | undefined,
  maxDurationMs: number,
): Promise<DecodedAudio> {
  try {
    // The limit is enforced while decoding: a small file that expands to hours stops early.
    return await audioThreadPool().decode(bytes, { contentType, maxDurationMs });
  } catch (err) {
    if (err instanceof AudioDecodeError) throw new AssetError(err.code, err.message);
    throw err;
  }
}

/** A reference clip must be 1 s to 5 min long (defaults; see Limits). */
export function checkClipLength(clip: DecodedAudio, limits: Limits): void {
  if (clip.durationMs < limits.clipMinMs) {
    throw new AssetError(
      'clip_too_short',
      `The clip is ${(clip.durationMs / 1000).toFixed(2)} s long; at least ${limits.clipMinMs / 1000} s is needed.`,
    );
  }
  if (clip.durationMs > limits.clipMaxMs) {
    throw new AssetError(
      'clip_too_long',
      `The clip is ${(clip.durationMs / 1000).toFixed(1)} s long; at most ${limits.clipMaxMs / 1000} s is accepted.`,
    );
  }
}

/**
 * A voice is built from speech: a clip in which the voice-activity detector (Silero VAD) finds
 * too little (silence, a steady tone, noise, music) is 422 `no_speech`.
 */
export async function requireSpeech(clip: DecodedAudio): Promise<void> {
  let found;
  try {
    found = await speechThreadPool().detectSpeech(clip.mono, clip.sampleRate);
  } catch (err) {
    if (err instanceof AudioDecodeError) throw new AssetError(err.code, err.message);
    throw err;
  }
  if (!found.hasSpeech) {
    throw new AssetError(
      'no_speech',
      `No speech found in the clip (${found.speechSeconds.toFixed(1)} s of ` +
        `${found.analysedSeconds.toFixed(1)} s examined): record someone speaking.`,
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
