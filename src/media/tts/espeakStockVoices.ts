// SPDX-License-Identifier: GPL-3.0-or-later
import { findStockVoice } from '../avatarCatalogue.js';
import { espeakPitchFor } from './espeakPitchModel.js';
import type { EspeakVoiceProfile } from './espeakVoiceProfile.js';
import { DEFAULT_ESPEAK_VOICE, normalizeEspeakVoice } from './espeakVoiceSettings.js';

/**
 * Voice profiles for the catalogue's stock voices. Each is a designed target (pitch, range,
 * vocal-tract size, rate) matching the avatar's description, mapped to espeak-ng settings with
 * the same model clip voices start from. Targets are typical adult values: female median F0
 * around 180-210 Hz with a 15 % shorter vocal tract, male around 110 Hz.
 */
interface StockTarget {
  medianHz: number;
  spreadSemitones: number;
  formantPercent: number;
  wordsPerMinute: number;
}

const TARGETS: Record<string, StockTarget> = {
  // Ada: warm presenter, calm delivery.
  voice_Ada000000000000000000001: {
    medianHz: 195,
    spreadSemitones: 3.5,
    formantPercent: 115,
    wordsPerMinute: 160,
  },
  // Milo: friendly support agent, brisk delivery.
  voice_Milo00000000000000000001: {
    medianHz: 112,
    spreadSemitones: 3.5,
    formantPercent: 98,
    wordsPerMinute: 185,
  },
  // Noor: tutor, clear and measured delivery.
  voice_Noor00000000000000000001: {
    medianHz: 180,
    spreadSemitones: 3,
    formantPercent: 112,
    wordsPerMinute: 150,
  },
};

/** Syllables per second espeak-ng produces per word-per-minute on running English text. */
const SYLLABLES_PER_SECOND_PER_WPM = 4.4 / 175;

function stockProfile(target: StockTarget): EspeakVoiceProfile {
  const semitone = 2 ** (target.spreadSemitones / 24);
  return {
    schema: 'visage.voice-profile/1',
    source: 'stock',
    pitch: {
      medianHz: target.medianHz,
      p10Hz: target.medianHz / semitone,
      p90Hz: target.medianHz * semitone,
      spreadSemitones: target.spreadSemitones,
    },
    formants: { f1Hz: 0, f2Hz: 0, f3Hz: 0 },
    syllablesPerSecond: target.wordsPerMinute * SYLLABLES_PER_SECOND_PER_WPM,
    spectralTiltDbPerOctave: 0,
    espeak: normalizeEspeakVoice({
      ...DEFAULT_ESPEAK_VOICE,
      ...espeakPitchFor(target.medianHz, target.spreadSemitones),
      formantPercent: target.formantPercent,
      wordsPerMinute: target.wordsPerMinute,
    }),
  };
}

/** The profile of a catalogue stock voice, or undefined when `voiceId` is not one. */
export function stockVoiceProfile(voiceId: string): EspeakVoiceProfile | undefined {
  const target = TARGETS[voiceId];
  if (!target || !findStockVoice(voiceId)) return undefined;
  return stockProfile(target);
}

/** The profile espeak-ng speaks with when nothing is configured (its own en-us voice). */
export function defaultVoiceProfile(): EspeakVoiceProfile {
  return stockProfile({
    medianHz: 103,
    spreadSemitones: 3,
    formantPercent: 100,
    wordsPerMinute: DEFAULT_ESPEAK_VOICE.wordsPerMinute,
  });
}
