// SPDX-License-Identifier: GPL-3.0-or-later
import type { EspeakEngine } from '../espeakEngine.js';
import { DEFAULT_ESPEAK_VOICE } from '../espeakVoiceSettings.js';
import type { PhonemeTiming, WordTiming } from '../ttsEngine.js';

/** espeak-ng's reading of a text: its words and phonemes on espeak's own time line. */
export interface Phonemized {
  words: WordTiming[];
  phonemes: PhonemeTiming[];
}

/** Phonemizes `text` with espeak-ng (on the shared synthesis thread; 15-50 ms per sentence). */
export async function phonemize(engine: EspeakEngine, text: string): Promise<Phonemized> {
  const out = await engine.synthesizeWithSettings(text, DEFAULT_ESPEAK_VOICE);
  return { words: out.words, phonemes: out.phonemes };
}

/** One character of the text as a provider timed it (character alignment). */
export interface CharTiming {
  /** UTF-16 offset into the text given to the engine. */
  charIndex: number;
  startMs: number;
  endMs: number;
}

/**
 * espeak's span for `word`'s characters: from its first word there to the next word's start
 * (the word's own pause included, at most 200 ms of it).
 */
function espeakSpan(reading: Phonemized, charStart: number, charEnd: number) {
  const own = reading.words.filter((w) => w.charStart < charEnd && w.charEnd > charStart);
  if (own.length === 0) return undefined;
  const first = own[0]!;
  const last = own[own.length - 1]!;
  const next = reading.words[reading.words.indexOf(last) + 1];
  const fromMs = first.startMs;
  const toMs = next ? Math.min(next.startMs, last.endMs + 200) : last.endMs;
  return { fromMs, toMs, charStart: first.charStart, charEnd: last.charEnd };
}

/**
 * espeak's phonemes that start between `fromMs` and `toMs`, stretched onto [startMs, endMs];
 * each lasts as espeak says up to `untilMs` (a phoneme that starts in one character's share of
 * its word runs on past it).
 */
function stretched(
  reading: Phonemized,
  fromMs: number,
  toMs: number,
  startMs: number,
  endMs: number,
  untilMs = toMs,
): PhonemeTiming[] {
  const scale = (endMs - startMs) / Math.max(1, toMs - fromMs);
  return reading.phonemes
    .filter((p) => p.startMs >= fromMs && p.startMs < toMs)
    .map((p) => ({
      ipa: p.ipa,
      stressed: p.stressed,
      startMs: startMs + (p.startMs - fromMs) * scale,
      endMs: startMs + (Math.min(p.endMs, untilMs) - fromMs) * scale,
    }));
}

/**
 * Phonemes on a provider's time line: each provider word (timed by the provider, placed in the
 * text by its character offsets) gets the phonemes espeak-ng gives the same characters, stretched
 * from espeak's span for them onto the provider's. Words espeak did not time are skipped (the
 * mouth rests there).
 */
export function phonemesForWords(reading: Phonemized, words: WordTiming[]): PhonemeTiming[] {
  const out: PhonemeTiming[] = [];
  for (const word of words) {
    const span = espeakSpan(reading, word.charStart, word.charEnd);
    if (!span) continue;
    out.push(...stretched(reading, span.fromMs, span.toMs, word.startMs, word.endMs));
  }
  return out;
}

/**
 * The same from character timings, as they arrive (a word's phonemes are known with its first
 * characters, not only once it is complete): each character takes its share of espeak's span
 * for its word, by its position in the word, stretched onto the character's own timing.
 */
export function phonemesForChars(reading: Phonemized, chars: CharTiming[]): PhonemeTiming[] {
  const out: PhonemeTiming[] = [];
  for (const c of chars) {
    const span = espeakSpan(reading, c.charIndex, c.charIndex + 1);
    if (!span) continue;
    const length = Math.max(1, span.charEnd - span.charStart);
    const share = (span.toMs - span.fromMs) / length;
    const fromMs = span.fromMs + (c.charIndex - span.charStart) * share;
    out.push(...stretched(reading, fromMs, fromMs + share, c.startMs, c.endMs, span.toMs));
  }
  return out;
}
