// SPDX-License-Identifier: GPL-3.0-or-later
import { AVATAR_CATALOGUE, findStockVoice, type StockVoice } from '../avatarCatalogue.js';

/**
 * The stock voice a photo avatar speaks with when its maker names none: the apparent register of
 * the portrait's face (face-api's age and gender net, run on the face the build animates) picks
 * the catalogue's first voice of that register, so that a man's portrait does not speak with a
 * woman's voice. An estimate this close to even is not trusted either way: the avatar then gets
 * UNSURE_VOICE_ID. See docs/photo-avatars.md#the-voice.
 */

export type VoiceRegister = 'male' | 'female' | 'unsure';

/**
 * Estimates within this distance of 0.5 are unsure. On the labelled portrait set the estimate
 * is at most 0.17 for every woman and at least 0.93 for every man; a painting (the Mona Lisa)
 * gives 0.58 and the synthetic mean face 0.73.
 */
export const UNSURE_WITHIN = 0.2;

/**
 * The voice of a portrait whose register is unsure: Noor's, the stock voice nearest the middle
 * of the two registers (median pitch 180 Hz against Ada's 195 and Milo's 112, a measured
 * delivery).
 */
export const UNSURE_VOICE_ID = 'voice_Noor00000000000000000001';

export interface FittingVoice {
  /** The stock voice chosen (`voice_…`). */
  voiceId: string;
  register: VoiceRegister;
  /** The estimate it was chosen by: the probability that the face is a man's (0..1). */
  maleProbability: number;
}

export function voiceRegister(maleProbability: number): VoiceRegister {
  if (!Number.isFinite(maleProbability) || Math.abs(maleProbability - 0.5) < UNSURE_WITHIN) {
    return 'unsure';
  }
  return maleProbability > 0.5 ? 'male' : 'female';
}

/** The stock voice that fits a face with this estimate. */
export function fittingStockVoice(maleProbability: number): FittingVoice {
  const register = voiceRegister(maleProbability);
  const voice: StockVoice | undefined =
    register === 'unsure'
      ? findStockVoice(UNSURE_VOICE_ID)
      : AVATAR_CATALOGUE.find((a) => a.defaultVoice.speaker === register)?.defaultVoice;
  return {
    voiceId: (voice ?? AVATAR_CATALOGUE[0]!.defaultVoice).voiceId,
    register,
    maleProbability,
  };
}
