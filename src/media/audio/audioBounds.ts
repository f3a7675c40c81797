// SPDX-License-Identifier: GPL-3.0-or-later
import { UnsupportedAudioError } from './audioDecodeError.js';

/**
 * What decoded audio may be: checked from the declared header before the decoder allocates
 * anything, and again on what it produces. A 38 KB WAV declaring 65,535 channels once made the
 * decoder allocate gigabytes; nothing a voice or an avatar needs comes close to these bounds.
 */
export const AUDIO_BOUNDS = {
  maxChannels: 8,
  minSampleRate: 8_000,
  maxSampleRate: 192_000,
} as const;

/** Throws UnsupportedAudioError (415) for a channel count or rate outside AUDIO_BOUNDS. */
export function checkAudioShape(format: string, channels: number, sampleRate: number): void {
  if (!Number.isInteger(channels) || channels < 1 || channels > AUDIO_BOUNDS.maxChannels) {
    throw new UnsupportedAudioError(
      `${format} audio declares ${channels} channels; 1 to ${AUDIO_BOUNDS.maxChannels} are accepted`,
    );
  }
  if (
    !Number.isFinite(sampleRate) ||
    sampleRate < AUDIO_BOUNDS.minSampleRate ||
    sampleRate > AUDIO_BOUNDS.maxSampleRate
  ) {
    throw new UnsupportedAudioError(
      `${format} audio declares a sample rate of ${sampleRate} Hz; ` +
        `${AUDIO_BOUNDS.minSampleRate} to ${AUDIO_BOUNDS.maxSampleRate} Hz are accepted`,
    );
  }
}
