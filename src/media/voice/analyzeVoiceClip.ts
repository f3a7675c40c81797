// SPDX-License-Identifier: GPL-3.0-or-later
import { UnreadableAudioError } from '../audio/audioDecodeError.js';
import { measureVoiceAsync, type VoiceMeasurement } from './measureVoice.js';

/**
 * What Visage knows about a speaker from their reference clip, whatever engine speaks for them:
 * pitch level and range, formants (apparent vocal-tract size), speaking rate and spectral tilt.
 * Engines derive their own voice from the clip and this analysis (espeak calibrates settings to
 * it; a cloning provider takes the clip itself).
 */
export type VoiceAnalysis = Omit<VoiceMeasurement, 'durationSeconds'>;

const MIN_VOICED_SECONDS = 0.5;
/** Longer clips (the API accepts 5 min) are analysed on their first minute. */
const MAX_ANALYSIS_SECONDS = 60;

/**
 * Analyse a reference clip (0.15-0.3 s of CPU for 30 s, yielding to the event loop between
 * steps). Errors: UnreadableAudioError (422) when the clip holds under 0.5 s of voiced speech.
 */
export async function analyzeVoiceClip(
  mono: Float32Array,
  sampleRate: number,
): Promise<VoiceAnalysis> {
  const analysed = mono.subarray(0, Math.round(MAX_ANALYSIS_SECONDS * sampleRate));
  const m = await measureVoiceAsync(analysed, sampleRate);
  if (m.voicedSeconds < MIN_VOICED_SECONDS || !(m.pitch.medianHz > 0)) {
    throw new UnreadableAudioError(
      `the clip has ${m.voicedSeconds.toFixed(2)} s of voiced speech; ` +
        `at least ${MIN_VOICED_SECONDS} s is needed to build a voice`,
    );
  }
  return {
    pitch: { ...m.pitch },
    formants: { ...m.formants },
    syllablesPerSecond: m.syllablesPerSecond,
    spectralTiltDbPerOctave: m.spectralTiltDbPerOctave,
    voicedSeconds: m.voicedSeconds,
  };
}
