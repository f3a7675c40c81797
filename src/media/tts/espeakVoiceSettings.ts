// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The espeak-ng parameters a voice profile maps to. They are applied per call as a generated
 * voice-variant file (pitch and formant lines) plus the rate and range API parameters, so voices
 * cost nothing at synthesis time beyond a ~1 ms voice switch.
 */
export interface EspeakVoiceSettings {
  /** espeak-ng voice name the variant applies to. Must be a voice *name* (`en-us`), since
   * espeak-ng ignores a variant suffix on a language tag such as `en-gb`. */
  voice: string;
  /** Variant `pitch <base> <top>` line, Hz: the intonation contour spans base..top. */
  pitchBaseHz: number;
  pitchTopHz: number;
  /** espeakRANGE, 0-100: how much of the contour is used (0 = monotone). */
  range: number;
  /** Formant frequency scale, percent, for formants 1-5: apparent vocal-tract size (100 =
   * espeak's default male tract; larger = shorter tract, as in female and child voices). */
  formantPercent: number;
  /** Speaking rate in words per minute (espeak-ng accepts 80-450). */
  wordsPerMinute: number;
}

export const ESPEAK_LIMITS = {
  pitchHz: { min: 30, max: 500 },
  range: { min: 0, max: 100 },
  formantPercent: { min: 80, max: 125 },
  wordsPerMinute: { min: 80, max: 450 },
} as const;

/** espeak-ng's own en-us voice (measured: median F0 about 103 Hz, 175 wpm). */
export const DEFAULT_ESPEAK_VOICE: EspeakVoiceSettings = {
  voice: 'en-us',
  pitchBaseHz: 82,
  pitchTopHz: 118,
  range: 50,
  formantPercent: 100,
  wordsPerMinute: 175,
};

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** Clamp to what espeak-ng accepts and round to the integer units its files and API use. */
export function normalizeEspeakVoice(settings: EspeakVoiceSettings): EspeakVoiceSettings {
  const base = Math.round(clamp(settings.pitchBaseHz, ESPEAK_LIMITS.pitchHz.min, 400));
  const top = Math.round(
    clamp(settings.pitchTopHz, base + 1, ESPEAK_LIMITS.pitchHz.max + base * 0.5),
  );
  return {
    voice: /^[a-z]{2,3}(-[a-z0-9]+)*$/i.test(settings.voice) ? settings.voice : 'en-us',
    pitchBaseHz: base,
    pitchTopHz: top,
    range: Math.round(clamp(settings.range, ESPEAK_LIMITS.range.min, ESPEAK_LIMITS.range.max)),
    formantPercent: Math.round(
      clamp(
        settings.formantPercent,
        ESPEAK_LIMITS.formantPercent.min,
        ESPEAK_LIMITS.formantPercent.max,
      ),
    ),
    wordsPerMinute: Math.round(
      clamp(
        settings.wordsPerMinute,
        ESPEAK_LIMITS.wordsPerMinute.min,
        ESPEAK_LIMITS.wordsPerMinute.max,
      ),
    ),
  };
}

/** Variant file name: derived from the values, so equal settings share one file. */
export function espeakVariantName(settings: EspeakVoiceSettings): string {
  const s = normalizeEspeakVoice(settings);
  return `visage_p${s.pitchBaseHz}_${s.pitchTopHz}_f${s.formantPercent}`;
}

/** Text of an espeak-ng voice-variant file (`espeak-ng-data/voices/!v/`). */
export function espeakVariantFile(settings: EspeakVoiceSettings): string {
  const s = normalizeEspeakVoice(settings);
  const lines = [
    'language variant',
    `name ${espeakVariantName(s)}`,
    `pitch ${s.pitchBaseHz} ${s.pitchTopHz}`,
  ];
  // Formant 0 is the voicing source; 1-5 carry the vocal-tract resonances that move with size.
  for (let n = 1; n <= 5; n++) lines.push(`formant ${n} ${s.formantPercent} 100 100`);
  return lines.join('\n') + '\n';
}
