// SPDX-License-Identifier: GPL-3.0-or-later
import type { EspeakVoiceSettings } from './espeakVoiceSettings.js';

/**
 * The espeak engine's voice, as plain JSON (stored with voice records whose engine is `espeak`):
 * the speaker's analysis and the espeak-ng settings calibrated to reproduce it.
 *
 * Honest scope: this captures pitch level and range, apparent vocal-tract size and speaking rate
 * of the reference speaker. espeak-ng reproduces those, so two clips of different speakers give
 * clearly different voices, but it does not reproduce the speaker's identity (timbre, accent,
 * voice quality); the cloning engines (`elevenlabs`, `cartesia`) do.
 */
export interface EspeakVoiceProfile {
  schema: 'visage.voice-profile/1';
  source: 'clip' | 'stock';
  pitch: {
    /** Median F0 of voiced speech (YIN), Hz. */
    medianHz: number;
    p10Hz: number;
    p90Hz: number;
    /** p10-p90 spread in semitones: how much the speaker's intonation moves. */
    spreadSemitones: number;
  };
  /** Median LPC formants of voiced speech, Hz (0 when not measured, e.g. stock voices). */
  formants: { f1Hz: number; f2Hz: number; f3Hz: number };
  /** Syllables per second of speaking time (pauses excluded). */
  syllablesPerSecond: number;
  /** Slope of the long-term spectrum, dB per octave over 125-4800 Hz (breathy/soft voices fall
   * faster). Measured for the record; espeak-ng has no matching control. */
  spectralTiltDbPerOctave: number;
  /** The espeak-ng voice that reproduces the above (applied by EspeakEngine). */
  espeak: EspeakVoiceSettings;
  /** Result of the closed-loop check at build time (clip voices). */
  calibration?: {
    /** Median F0 the espeak voice actually produced on the probe text. */
    outputMedianHz: number;
    /** (output - reference) / reference, percent. */
    f0ErrorPercent: number;
    iterations: number;
    /** Wall time to build the profile (analysis + calibration), ms. */
    buildMs: number;
  };
}
