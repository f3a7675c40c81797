// SPDX-License-Identifier: GPL-3.0-or-later
import { describe, expect, it } from 'vitest';
import {
  parseVoiceProfile,
  stockVoiceProfile,
  voiceProfileFor,
  VoiceProfileUnavailableError,
} from '../../../src/media/tts/index.js';

const ADA = 'voice_Ada000000000000000000001';

describe('parseVoiceProfile / voiceProfileFor', () => {
  it('round-trips a profile through JSON', () => {
    const profile = stockVoiceProfile(ADA)!;
    const stored: unknown = JSON.parse(JSON.stringify({ ...profile, source: 'clip' }));
    expect(parseVoiceProfile(stored)).toEqual({ ...profile, source: 'clip' });
  });

  it('refuses foreign or broken values and clamps espeak settings into range', () => {
    expect(parseVoiceProfile(null)).toBeUndefined();
    expect(parseVoiceProfile({ schema: 'other' })).toBeUndefined();
    const profile = stockVoiceProfile(ADA)!;
    expect(
      parseVoiceProfile({ ...profile, pitch: { ...profile.pitch, medianHz: 'x' } }),
    ).toBeUndefined();
    const wild = parseVoiceProfile({
      ...profile,
      espeak: { ...profile.espeak, wordsPerMinute: 9999, formantPercent: 10 },
    });
    expect(wild?.espeak.wordsPerMinute).toBe(450);
    expect(wild?.espeak.formantPercent).toBe(80);
  });

  it('uses the stock profile for catalogue ids and the stored one otherwise', () => {
    expect(voiceProfileFor(ADA, null)).toEqual(stockVoiceProfile(ADA));
    const stored = { ...stockVoiceProfile(ADA)!, source: 'clip' };
    expect(voiceProfileFor('vc_abc', stored).source).toBe('clip');
    expect(() => voiceProfileFor('vc_abc', { nope: true })).toThrow(VoiceProfileUnavailableError);
  });
});
