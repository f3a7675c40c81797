// SPDX-License-Identifier: GPL-3.0-or-later
import type { Viseme } from './viseme.js';

/**
 * IPA (as espeak-ng prints it in phoneme events) to visemes. One phoneme event can hold several
 * segments ("aʊ", "tʃ", "ɔːɹ", "əl"), so a phoneme becomes one or more units, each with the
 * viseme and how open the mouth gets for it.
 */
export interface VisemeUnit {
  readonly viseme: Viseme;
  /** Target openness, 0..1, before stress scaling. */
  readonly openness: number;
  readonly isVowel: boolean;
  /** Share of the phoneme's duration this unit takes (diphthongs split, affricates do not). */
  readonly weight: number;
}

interface SegmentClass {
  readonly viseme: Viseme;
  readonly openness: number;
  readonly isVowel: boolean;
}

function vowel(viseme: Viseme, openness: number): SegmentClass {
  return { viseme, openness, isVowel: true };
}
function consonant(viseme: Viseme, openness: number): SegmentClass {
  return { viseme, openness, isVowel: false };
}

// Multi-character segments first (affricates are one mouth gesture, not two).
const DIGRAPHS: ReadonlyMap<string, SegmentClass> = new Map([
  ['tʃ', consonant('CH', 0.6)],
  ['dʒ', consonant('CH', 0.6)],
  ['ts', consonant('SZ', 0.35)],
  ['dz', consonant('SZ', 0.35)],
  ['ʧ', consonant('CH', 0.6)],
  ['ʤ', consonant('CH', 0.6)],
]);

const SEGMENTS: ReadonlyMap<string, SegmentClass> = new Map([
  // open vowels
  ['a', vowel('AA', 1)],
  ['ɑ', vowel('AA', 1)],
  ['æ', vowel('AA', 0.9)],
  ['ʌ', vowel('AA', 0.8)],
  ['ɐ', vowel('AA', 0.7)],
  ['ä', vowel('AA', 1)],
  ['ɶ', vowel('AA', 0.9)],
  // mid unrounded vowels
  ['e', vowel('E', 0.7)],
  ['ɛ', vowel('E', 0.8)],
  ['ə', vowel('E', 0.5)],
  ['ɜ', vowel('E', 0.65)],
  ['ɚ', vowel('E', 0.5)],
  ['ɝ', vowel('E', 0.6)],
  ['ɘ', vowel('E', 0.5)],
  // close front vowels (spread lips)
  ['i', vowel('I', 0.55)],
  ['ɪ', vowel('I', 0.55)],
  ['ᵻ', vowel('I', 0.5)],
  ['ɨ', vowel('I', 0.5)],
  ['y', vowel('U', 0.5)],
  ['ʏ', vowel('U', 0.5)],
  // rounded vowels
  ['o', vowel('O', 0.8)],
  ['ɔ', vowel('O', 0.9)],
  ['ɒ', vowel('O', 0.95)],
  ['ø', vowel('O', 0.7)],
  ['œ', vowel('O', 0.8)],
  ['ɵ', vowel('O', 0.7)],
  ['u', vowel('U', 0.6)],
  ['ʊ', vowel('U', 0.6)],
  ['ɯ', vowel('U', 0.5)],
  ['ʉ', vowel('U', 0.55)],
  ['ɤ', vowel('O', 0.6)],
  // consonants (bilabials close the mouth: the MBP shape is drawn closed at any openness)
  ['p', consonant('MBP', 0)],
  ['b', consonant('MBP', 0)],
  ['m', consonant('MBP', 0)],
  ['ʙ', consonant('MBP', 0)],
  ['f', consonant('FV', 0.8)],
  ['v', consonant('FV', 0.8)],
  ['ɱ', consonant('FV', 0.7)],
  ['ʋ', consonant('FV', 0.7)],
  ['θ', consonant('TH', 0.7)],
  ['ð', consonant('TH', 0.7)],
  ['l', consonant('L', 0.6)],
  ['ɫ', consonant('L', 0.6)],
  ['ɭ', consonant('L', 0.6)],
  ['ʎ', consonant('L', 0.5)],
  ['ɬ', consonant('L', 0.5)],
  ['ɮ', consonant('L', 0.5)],
  ['w', consonant('WQ', 0.8)],
  ['ʍ', consonant('WQ', 0.8)],
  ['ɥ', consonant('WQ', 0.7)],
  ['s', consonant('SZ', 0.35)],
  ['z', consonant('SZ', 0.35)],
  ['t', consonant('SZ', 0.35)],
  ['d', consonant('SZ', 0.35)],
  ['n', consonant('SZ', 0.3)],
  ['ɾ', consonant('SZ', 0.4)],
  ['ɗ', consonant('SZ', 0.35)],
  ['ʈ', consonant('SZ', 0.35)],
  ['ɖ', consonant('SZ', 0.35)],
  ['ɳ', consonant('SZ', 0.3)],
  ['ɲ', consonant('SZ', 0.3)],
  ['c', consonant('SZ', 0.35)],
  ['ʃ', consonant('CH', 0.6)],
  ['ʒ', consonant('CH', 0.6)],
  ['ɕ', consonant('CH', 0.55)],
  ['ʑ', consonant('CH', 0.55)],
  ['ç', consonant('CH', 0.5)],
  ['ʝ', consonant('CH', 0.5)],
  ['ʂ', consonant('CH', 0.55)],
  ['ʐ', consonant('CH', 0.55)],
  ['j', consonant('I', 0.35)],
  ['k', consonant('KG', 0.4)],
  ['g', consonant('KG', 0.4)],
  ['ɡ', consonant('KG', 0.4)],
  ['ŋ', consonant('KG', 0.35)],
  ['x', consonant('KG', 0.45)],
  ['ɣ', consonant('KG', 0.45)],
  ['q', consonant('KG', 0.4)],
  ['ɢ', consonant('KG', 0.4)],
  ['χ', consonant('KG', 0.45)],
  ['ʁ', consonant('KG', 0.45)],
  ['h', consonant('KG', 0.5)],
  ['ɦ', consonant('KG', 0.5)],
  ['ɹ', consonant('R', 0.5)],
  ['r', consonant('R', 0.5)],
  ['ɻ', consonant('R', 0.5)],
  ['ʀ', consonant('R', 0.45)],
  ['ɺ', consonant('L', 0.5)],
  ['ʔ', consonant('KG', 0.15)],
]);

const PRIMARY_STRESS = 'ˈ';
const SECONDARY_STRESS = 'ˌ';

/** Stress scales vowel openness: stressed syllables are articulated more fully. */
const STRESS_SCALE = { primary: 1, secondary: 0.92, none: 0.85 } as const;

/**
 * Units of one espeak-ng IPA phoneme, in order. Stress comes from the marks in `ipa` or from
 * `stressed` (engines that strip the marks report it separately). Stress and length marks, tie bars, syllabic and
 * other diacritics and pause symbols are ignored; unknown symbols are skipped (an empty result
 * means "no mouth gesture": the timeline treats it as rest).
 */
export function ipaToVisemeUnits(ipa: string, stressed?: boolean): VisemeUnit[] {
  const stress =
    stressed === true || ipa.includes(PRIMARY_STRESS)
      ? STRESS_SCALE.primary
      : ipa.includes(SECONDARY_STRESS)
        ? STRESS_SCALE.secondary
        : STRESS_SCALE.none;
  // Combining diacritics (syllabic, nasal, tie bar...) do not change the mouth shape much.
  const chars = Array.from(ipa.normalize('NFC').replace(/[\u0300-\u036f]/g, ''));
  const found: SegmentClass[] = [];
  for (let i = 0; i < chars.length; i++) {
    const pair = (chars[i] ?? '') + (chars[i + 1] ?? '');
    const digraph = DIGRAPHS.get(pair);
    if (digraph) {
      found.push(digraph);
      i++;
      continue;
    }
    const seg = SEGMENTS.get(chars[i] ?? '');
    if (seg) found.push(seg);
  }
  // A diphthong's first element carries more of its duration than its glide.
  const weights = found.map((s, i) =>
    s.isVowel && found.length > 1 ? (i === 0 ? 1.3 : 0.8) : s.isVowel ? 1 : 0.7,
  );
  const total = weights.reduce((a, b) => a + b, 0);
  return found.map((s, i) => ({
    viseme: s.viseme,
    openness: s.isVowel ? s.openness * stress : s.openness,
    isVowel: s.isVowel,
    weight: (weights[i] ?? 0) / total,
  }));
}
