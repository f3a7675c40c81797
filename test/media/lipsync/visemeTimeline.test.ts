// SPDX-License-Identifier: GPL-3.0-or-later
import { describe, expect, it } from 'vitest';
import { ipaToVisemeUnits } from '../../../src/media/lipsync/ipaVisemes.js';
import {
  mouthPoseAt,
  visemeTimeline,
  type PhonemeTiming,
} from '../../../src/media/lipsync/visemeTimeline.js';

/** Phonemes back to back from a list of [ipa, durationMs], starting at `startMs`. */
function phonemes(list: [string, number][], startMs = 200): PhonemeTiming[] {
  let t = startMs;
  return list.map(([ipa, ms]) => {
    const p = { ipa, startMs: t, endMs: t + ms };
    t += ms;
    return p;
  });
}

describe('ipaToVisemeUnits', () => {
  it('maps espeak-ng IPA, ignoring stress, length and diacritics', () => {
    expect(ipaToVisemeUnits('ˈɑː').map((u) => u.viseme)).toEqual(['AA']);
    expect(ipaToVisemeUnits('m').map((u) => u.viseme)).toEqual(['MBP']);
    expect(ipaToVisemeUnits('tʃ').map((u) => u.viseme)).toEqual(['CH']);
    expect(ipaToVisemeUnits('dʒ').map((u) => u.viseme)).toEqual(['CH']);
    expect(ipaToVisemeUnits('n̩').map((u) => u.viseme)).toEqual(['SZ']);
    expect(ipaToVisemeUnits('ð').map((u) => u.viseme)).toEqual(['TH']);
    expect(ipaToVisemeUnits('f').map((u) => u.viseme)).toEqual(['FV']);
    expect(ipaToVisemeUnits('w').map((u) => u.viseme)).toEqual(['WQ']);
    expect(ipaToVisemeUnits('_')).toEqual([]);
    expect(ipaToVisemeUnits('')).toEqual([]);
  });

  it('splits diphthongs, giving the first element the larger share', () => {
    const units = ipaToVisemeUnits('ˈaɪ');
    expect(units.map((u) => u.viseme)).toEqual(['AA', 'I']);
    expect(units[0]!.weight).toBeGreaterThan(units[1]!.weight);
    expect(units.reduce((s, u) => s + u.weight, 0)).toBeCloseTo(1);
    expect(ipaToVisemeUnits('oʊ').map((u) => u.viseme)).toEqual(['O', 'U']);
    expect(ipaToVisemeUnits('ɔːɹ').map((u) => u.viseme)).toEqual(['O', 'R']);
  });

  it('opens stressed vowels wider than unstressed ones', () => {
    expect(ipaToVisemeUnits('ˈa')[0]!.openness).toBeGreaterThan(ipaToVisemeUnits('a')[0]!.openness);
  });
});

describe('visemeTimeline', () => {
  // "mama, ball" with a pause: m ˈɑː m ə _ b ˈɔː l
  const speech = phonemes([
    ['m', 90],
    ['ˈɑː', 180],
    ['m', 90],
    ['ə', 110],
    ['_', 200],
    ['b', 80],
    ['ˈɔː', 200],
    ['l', 90],
  ]);
  const at = (ipaIndex: number, frac = 0.5): number => {
    const p = speech[ipaIndex]!;
    return p.startMs + (p.endMs - p.startMs) * frac;
  };
  const tl = visemeTimeline(speech);

  it('rests before and after the speech', () => {
    expect(mouthPoseAt(tl, 0)).toEqual({ viseme: 'rest', openness: 0 });
    expect(mouthPoseAt(tl, -1000)).toEqual({ viseme: 'rest', openness: 0 });
    expect(mouthPoseAt(tl, speech.at(-1)!.endMs + 500)).toEqual({ viseme: 'rest', openness: 0 });
  });

  it('opens the mouth in vowels and closes it for m, b, p', () => {
    const ah = mouthPoseAt(tl, at(1, 0.6));
    expect(ah.viseme).toBe('AA');
    expect(ah.openness).toBeGreaterThan(0.6);
    const aw = mouthPoseAt(tl, at(6, 0.6));
    expect(aw.viseme).toBe('O');
    expect(aw.openness).toBeGreaterThan(0.5);
    // The mouth runs 30 ms ahead of the sound, so look a little before each closure's middle.
    for (const i of [0, 2, 5]) {
      const pose = mouthPoseAt(tl, at(i, 0.3));
      expect(pose.viseme, `phoneme ${speech[i]!.ipa} at ${at(i, 0.3)}`).toBe('MBP');
    }
  });

  it('moves ahead of the sound and eases in and out (attack and release)', () => {
    // The bilabial closure is already formed a little before the m is heard.
    expect(mouthPoseAt(tl, speech[2]!.startMs - 5).viseme).toBe('MBP');
    // Opening into the vowel takes a few tens of ms, not one step.
    // The lead, and the m's last 15 ms (a closure shows for its core).
    const vowelStart = speech[1]!.startMs - 30 - 15;
    const early = mouthPoseAt(tl, vowelStart + 5).openness;
    const later = mouthPoseAt(tl, vowelStart + 60).openness;
    expect(early).toBeLessThan(later);
    expect(early).toBeLessThan(0.5);
    // After the last phoneme the mouth closes gradually, then rests.
    const end = speech.at(-1)!.endMs;
    const closing = mouthPoseAt(tl, end - 10).openness;
    expect(closing).toBeGreaterThan(0.05);
    expect(mouthPoseAt(tl, end + 250).openness).toBeLessThan(0.05);
  });

  it('shows a lip closure for its core and gives its edges to the sounds around it', () => {
    const q = visemeTimeline(
      phonemes(
        [
          ['ˈɑː', 150],
          ['m', 90],
          ['ˈɑː', 150],
          ['b', 30],
          ['ˈɑː', 150],
        ],
        0,
      ),
      { leadMs: 0 },
    );
    // The 90 ms m (150..240): its first and last 15 ms belong to the vowels.
    expect(mouthPoseAt(q, 155).viseme).toBe('AA');
    expect(mouthPoseAt(q, 170).viseme).toBe('MBP');
    expect(mouthPoseAt(q, 220).viseme).toBe('MBP');
    expect(mouthPoseAt(q, 235).viseme).toBe('AA');
    // A closure shorter than a video frame (40 ms, the b at 390..420) is never shortened.
    expect(mouthPoseAt(q, 392).viseme).toBe('MBP');
    expect(mouthPoseAt(q, 410).viseme).toBe('MBP');
  });

  it('closes during a pause between words', () => {
    const pause = speech[4]!;
    expect(mouthPoseAt(tl, pause.startMs + 150).openness).toBeLessThan(0.15);
  });

  it('lets a short t or n borrow the next vowel shape instead of flickering', () => {
    // "eat a": ˈiː t ə — the 30 ms t keeps a vowel shape.
    const quick = phonemes([
      ['ˈiː', 150],
      ['t', 30],
      ['ˈɑː', 150],
    ]);
    const q = visemeTimeline(quick, { leadMs: 0 });
    expect(mouthPoseAt(q, quick[1]!.startMs + 15).viseme).toBe('AA');
    // A long one keeps its own shape.
    const slow = phonemes([
      ['ˈiː', 150],
      ['s', 120],
      ['ˈɑː', 150],
    ]);
    const s = visemeTimeline(slow, { leadMs: 0 });
    expect(mouthPoseAt(s, slow[1]!.startMs + 80).viseme).toBe('SZ');
  });

  it('is empty for no phonemes', () => {
    const empty = visemeTimeline([]);
    expect(mouthPoseAt(empty, 0)).toEqual({ viseme: 'rest', openness: 0 });
  });
});
