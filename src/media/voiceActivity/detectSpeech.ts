// SPDX-License-Identifier: GPL-3.0-or-later
import { resample } from '../audio/resample.js';
import { SILERO_SAMPLE_RATE, type SileroVad } from './sileroVad.js';

export interface SpeechDetection {
  /** Seconds of audio the detector looked at. */
  analysedSeconds: number;
  /** Of those, seconds it judged speech (frame probability >= 0.5). */
  speechSeconds: number;
  /** Whether the clip holds enough speech to build a voice from. */
  hasSpeech: boolean;
}

/** At most this much audio is examined: the whole clip up to it, else windows spread over it. */
const MAX_ANALYSED_SECONDS = 30;
const WINDOW_SECONDS = 3;
const FRAME_SECONDS = 512 / SILERO_SAMPLE_RATE;
/**
 * A clip holds speech when at least this share of what was examined is speech and at least
 * MIN_SPEECH_SECONDS of it. Measured: speech clips score 0.74 to 0.95, silence, pure tones,
 * white noise and a synthetic melody 0 to 0.02.
 */
const MIN_SPEECH_SHARE = 0.2;
const MIN_SPEECH_SECONDS = 0.5;

/** Where the examined windows of a clip start (in 16 kHz samples). */
function windowStarts(length: number): { starts: number[]; size: number } {
  const total = MAX_ANALYSED_SECONDS * SILERO_SAMPLE_RATE;
  if (length <= total) return { starts: [0], size: length };
  const size = WINDOW_SECONDS * SILERO_SAMPLE_RATE;
  const count = Math.floor(MAX_ANALYSED_SECONDS / WINDOW_SECONDS);
  const step = (length - size) / (count - 1);
  return { starts: Array.from({ length: count }, (_, i) => Math.round(i * step)), size };
}

/**
 * Whether a clip holds speech, by Silero VAD over at most 30 s of it (evenly spread windows for
 * longer clips), so the cost is bounded whatever the clip's length.
 */
export async function detectSpeech(
  vad: SileroVad,
  mono: Float32Array,
  sampleRate: number,
): Promise<SpeechDetection> {
  const signal =
    sampleRate === SILERO_SAMPLE_RATE ? mono : resample(mono, sampleRate, SILERO_SAMPLE_RATE);
  const { starts, size } = windowStarts(signal.length);
  let frames = 0;
  let speechFrames = 0;
  for (const start of starts) {
    const probabilities = await vad.frameProbabilities(signal.subarray(start, start + size));
    frames += probabilities.length;
    for (const p of probabilities) if (p >= 0.5) speechFrames++;
  }
  const analysedSeconds = frames * FRAME_SECONDS;
  const speechSeconds = speechFrames * FRAME_SECONDS;
  return {
    analysedSeconds,
    speechSeconds,
    hasSpeech:
      speechSeconds >= MIN_SPEECH_SECONDS && speechFrames >= MIN_SPEECH_SHARE * Math.max(1, frames),
  };
}
