// SPDX-License-Identifier: GPL-3.0-or-later
import type { PhonemeTiming, SpeechChunk, WordTiming } from '../ttsEngine.js';
import {
  phonemesForChars,
  phonemesForWords,
  type CharTiming,
  type Phonemized,
} from './wordPhonemes.js';

const shiftWord = (w: WordTiming, ms: number): WordTiming => ({
  ...w,
  startMs: w.startMs - ms,
  endMs: w.endMs - ms,
});
const shiftPhoneme = (p: PhonemeTiming, ms: number): PhonemeTiming => ({
  ...p,
  startMs: p.startMs - ms,
  endMs: p.endMs - ms,
});

/**
 * Turns a provider's stream (audio pieces, and timings on the utterance's time line that arrive
 * before or after the audio they describe) into SpeechChunks: audio goes out as soon as it
 * comes, with whatever timings are known by then, made relative to that chunk's first sample.
 * Words without provider phonemes get espeak-ng's phonemes once `reading` resolves; audio never
 * waits for it.
 */
export class ChunkTimings {
  private emitted = 0;
  private words: WordTiming[] = [];
  private phonemes: PhonemeTiming[] = [];
  private unphonemized: WordTiming[] = [];
  private unphonemizedChars: CharTiming[] = [];
  private phonemized: Phonemized | undefined;
  /** The provider sends its own phonemes: words need none from the reading. */
  private providerPhonemes = false;

  constructor(private readonly reading?: Promise<Phonemized>) {
    reading?.then(
      (r) => (this.phonemized = r),
      () => undefined,
    );
  }

  /** Whether the provider sends phonemes of its own (words then need none from the reading). */
  get hasProviderPhonemes(): boolean {
    return this.providerPhonemes;
  }

  /** Ms of audio handed out so far: where the next chunk starts on the utterance's time line. */
  get emittedMs(): number {
    return this.emitted;
  }

  /** Words on the utterance's time line; their phonemes come from `reading` unless `withPhonemes` is false. */
  addWords(words: WordTiming[], withPhonemes: boolean): void {
    this.words.push(...words);
    if (withPhonemes && !this.providerPhonemes) this.unphonemized.push(...words);
  }

  /**
   * Characters on the utterance's time line, phonemized from `reading` as they arrive (the
   * words then carry no phonemes of their own: add them with `withPhonemes` false).
   */
  addChars(chars: CharTiming[]): void {
    if (!this.providerPhonemes) this.unphonemizedChars.push(...chars);
  }

  /** The provider's own phonemes; from now on words are not phonemized from the reading. */
  addPhonemes(phonemes: PhonemeTiming[]): void {
    this.providerPhonemes = true;
    this.unphonemized = [];
    this.unphonemizedChars = [];
    this.phonemes.push(...phonemes);
  }

  /** A chunk of `pcm` carrying the timings known now. */
  chunk(pcm: Float32Array, sampleRate: number): SpeechChunk {
    this.resolvePhonemes();
    const at = this.emitted;
    const chunk: SpeechChunk = {
      sampleRate,
      pcm,
      words: this.words.map((w) => shiftWord(w, at)),
      phonemes: this.phonemes.map((p) => shiftPhoneme(p, at)),
    };
    this.words = [];
    this.phonemes = [];
    this.emitted += (pcm.length / sampleRate) * 1000;
    return chunk;
  }

  /**
   * Timings that arrived after the audio they describe, as an empty chunk to hand on at once
   * (not with the next audio, by when they would be in the past), or undefined if none.
   */
  pending(sampleRate: number): SpeechChunk | undefined {
    this.resolvePhonemes();
    if (this.words.length === 0 && this.phonemes.length === 0) return undefined;
    return this.chunk(new Float32Array(0), sampleRate);
  }

  /** After the last audio: an empty chunk with the timings still pending, or undefined. */
  async finish(sampleRate: number): Promise<SpeechChunk | undefined> {
    if ((this.unphonemized.length > 0 || this.unphonemizedChars.length > 0) && this.reading) {
      this.phonemized = await this.reading.catch(() => undefined);
    }
    this.resolvePhonemes();
    if (this.words.length === 0 && this.phonemes.length === 0) return undefined;
    return this.chunk(new Float32Array(0), sampleRate);
  }

  private resolvePhonemes(): void {
    if (!this.phonemized) return;
    this.phonemes.push(...phonemesForWords(this.phonemized, this.unphonemized));
    this.phonemes.push(...phonemesForChars(this.phonemized, this.unphonemizedChars));
    this.unphonemized = [];
    this.unphonemizedChars = [];
  }
}
