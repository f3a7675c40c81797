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

/**
 * Phonemes on a provider's time line: each provider word (timed by the provider, placed in the
 * text by its character offsets) gets the phonemes espeak-ng gives the same characters, stretched
 * from espeak's span for them onto the provider's. Words espeak did not time are skipped (the
 * mouth rests there).
 */
export function phonemesForWords(reading: Phonemized, words: WordTiming[]): PhonemeTiming[] {
  const out: PhonemeTiming[] = [];
  for (const word of words) {
    const own = reading.words.filter(
      (w) => w.charStart < word.charEnd && w.charEnd > word.charStart,
    );
    if (own.length === 0) continue;
    const fromMs = own[0]!.startMs;
    const lastIndex = reading.words.indexOf(own[own.length - 1]!);
    const next = reading.words[lastIndex + 1];
    const toMs = next
      ? Math.min(next.startMs, own[own.length - 1]!.endMs + 200)
      : own[own.length - 1]!.endMs;
    const phonemes = reading.phonemes.filter((p) => p.startMs >= fromMs && p.startMs < toMs);
    const span = Math.max(1, toMs - fromMs);
    const scale = (word.endMs - word.startMs) / span;
    for (const p of phonemes) {
      out.push({
        ipa: p.ipa,
        stressed: p.stressed,
        startMs: word.startMs + (p.startMs - fromMs) * scale,
        endMs: word.startMs + (Math.min(p.endMs, toMs) - fromMs) * scale,
      });
    }
  }
  return out;
}
