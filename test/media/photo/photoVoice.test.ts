// SPDX-License-Identifier: GPL-3.0-or-later
// The choice of a photo avatar's default voice from the face's estimate (photoVoice.ts): the
// catalogue voice of the register, and the documented voice where the estimate is unsure.
import { describe, expect, it } from 'vitest';
import { findStockVoice } from '../../../src/media/avatarCatalogue.js';
import {
  fittingStockVoice,
  UNSURE_VOICE_ID,
  voiceRegister,
} from '../../../src/media/photo/index.js';

describe('fittingStockVoice', () => {
  it('gives a sure man Milo, a sure woman Ada, and an unsure face Noor', () => {
    expect(findStockVoice(fittingStockVoice(0.95).voiceId)).toMatchObject({
      name: 'Milo',
      speaker: 'male',
    });
    expect(findStockVoice(fittingStockVoice(0.05).voiceId)).toMatchObject({
      name: 'Ada',
      speaker: 'female',
    });
    for (const p of [0.5, 0.35, 0.65, Number.NaN]) {
      expect(fittingStockVoice(p)).toMatchObject({ voiceId: UNSURE_VOICE_ID, register: 'unsure' });
    }
    expect(findStockVoice(UNSURE_VOICE_ID)?.name).toBe('Noor');
  });

  it('is unsure only near even', () => {
    expect([0, 0.29, 0.31, 0.69, 0.71, 1].map(voiceRegister)).toEqual([
      'female',
      'female',
      'unsure',
      'unsure',
      'male',
      'male',
    ]);
  });
});
