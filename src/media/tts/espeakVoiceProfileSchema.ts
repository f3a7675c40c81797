// SPDX-License-Identifier: GPL-3.0-or-later
import { z } from 'zod';
import { stockVoiceProfile } from './espeakStockVoices.js';
import type { EspeakVoiceProfile } from './espeakVoiceProfile.js';
import { normalizeEspeakVoice } from './espeakVoiceSettings.js';

/**
 * Validation for profiles read back from storage (the session spec carries them as `unknown`).
 * A stored profile from an older or foreign schema is refused rather than half-applied.
 */
const hz = z.number().finite().min(0).max(5000);

export const voiceProfileSchema = z.object({
  schema: z.literal('visage.voice-profile/1'),
  source: z.enum(['clip', 'stock']),
  pitch: z.object({
    medianHz: hz,
    p10Hz: hz,
    p90Hz: hz,
    spreadSemitones: z.number().finite().min(0).max(48),
  }),
  formants: z.object({ f1Hz: hz, f2Hz: hz, f3Hz: hz }),
  syllablesPerSecond: z.number().finite().min(0).max(20),
  spectralTiltDbPerOctave: z.number().finite(),
  espeak: z.object({
    voice: z.string().min(2).max(32),
    pitchBaseHz: z.number().finite(),
    pitchTopHz: z.number().finite(),
    range: z.number().finite(),
    formantPercent: z.number().finite(),
    wordsPerMinute: z.number().finite(),
  }),
  calibration: z
    .object({
      outputMedianHz: z.number().finite(),
      f0ErrorPercent: z.number().finite(),
      iterations: z.number().int().min(0),
      buildMs: z.number().finite().min(0),
    })
    .optional(),
});

/** The profile if `value` is a valid stored EspeakVoiceProfile (espeak values clamped), else undefined. */
export function parseVoiceProfile(value: unknown): EspeakVoiceProfile | undefined {
  const parsed = voiceProfileSchema.safeParse(value);
  if (!parsed.success) return undefined;
  return { ...parsed.data, espeak: normalizeEspeakVoice(parsed.data.espeak) };
}

export class VoiceProfileUnavailableError extends Error {
  override readonly name = 'VoiceProfileUnavailableError';
}

/**
 * The profile a session speaks with: the stock profile for a catalogue voice id, otherwise the
 * stored profile of a cloned voice. Throws VoiceProfileUnavailableError when neither applies.
 */
export function voiceProfileFor(voiceId: string, stored: unknown): EspeakVoiceProfile {
  const stock = stockVoiceProfile(voiceId);
  if (stock) return stock;
  const profile = parseVoiceProfile(stored);
  if (!profile) {
    throw new VoiceProfileUnavailableError(`voice ${voiceId} has no valid stored profile`);
  }
  return profile;
}
