import type { EspeakVoiceSettings } from '../tts/espeakVoiceSettings.js';

/**
 * What Visage knows about a voice, as plain JSON (it is stored with the voice record).
 *
 * Honest scope: a profile captures pitch level and range, apparent vocal-tract size and speaking
 * rate of the reference speaker. The offline espeak-ng engine reproduces those, so two clips of
 * different speakers give clearly different voices, but it does not reproduce the speaker's
 * identity (timbre, accent, voice quality). Engines that really clone need the clip itself or a
 * vendor voice id, which belong to those engines, not to this profile.
 */
export interface VoiceProfile {
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
