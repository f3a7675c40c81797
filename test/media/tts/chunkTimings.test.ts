// SPDX-License-Identifier: GPL-3.0-or-later
import { describe, expect, it } from 'vitest';
import { ChunkTimings } from '../../../src/media/tts/providers/chunkTimings.js';
import {
  phonemesForChars,
  phonemesForWords,
  type Phonemized,
} from '../../../src/media/tts/providers/wordPhonemes.js';

const RATE = 1000; // one sample per ms keeps the arithmetic readable
const word = (text: string, charStart: number, startMs: number, endMs: number) => ({
  text,
  charStart,
  charEnd: charStart + text.length,
  startMs,
  endMs,
});
const phoneme = (ipa: string, startMs: number, endMs: number) => ({
  ipa,
  startMs,
  endMs,
  stressed: false,
});

// espeak's reading of "hi you": its own time line.
const READING: Phonemized = {
  words: [word('hi', 0, 0, 200), word('you', 3, 300, 500)],
  phonemes: [
    phoneme('h', 0, 100),
    phoneme('aɪ', 100, 200),
    phoneme('j', 300, 350),
    phoneme('uː', 350, 500),
  ],
};

describe('phonemesForWords', () => {
  it("stretches espeak's phonemes for each word onto the provider's span for it", () => {
    const out = phonemesForWords(READING, [word('hi', 0, 1000, 1400), word('you', 3, 1600, 1700)]);
    expect(out.map((p) => p.ipa)).toEqual(['h', 'aɪ', 'j', 'uː']);
    // "hi": espeak's 0-300 ms (up to the next word) onto 1000-1400 ms.
    expect(out[0]).toMatchObject({ startMs: 1000 });
    expect(out[1]!.startMs).toBeCloseTo(1000 + (100 * 400) / 300);
    // "you": espeak's 300-500 ms onto 1600-1700 ms.
    expect(out[2]).toMatchObject({ startMs: 1600 });
    expect(out[3]!.startMs).toBeCloseTo(1625);
    expect(out[3]!.endMs).toBeCloseTo(1700);
  });
});

describe('phonemesForChars', () => {
  it("gives each character its share of espeak's span for its word, before the word is complete", () => {
    // "yo" of "you" so far: 'y' at 1600-1650, 'o' at 1650-1700 (the 'u' not yet arrived).
    const out = phonemesForChars(READING, [
      { charIndex: 3, startMs: 1600, endMs: 1650 },
      { charIndex: 4, startMs: 1650, endMs: 1700 },
    ]);
    // "you" is espeak's 300-500 ms: 'y' takes 300-367 (the j at 300, uː at 350), 'o' 367-433.
    expect(out.map((p) => p.ipa)).toEqual(['j', 'uː']);
    expect(out[0]!.startMs).toBeCloseTo(1600);
    expect(out[1]!.startMs).toBeCloseTo(1600 + (50 * 50) / (200 / 3));
    // A space, or a character espeak did not time, gives nothing.
    expect(phonemesForChars(READING, [{ charIndex: 2, startMs: 0, endMs: 10 }])).toEqual([]);
  });
});

describe('ChunkTimings', () => {
  it('hands on timings that arrive after their audio at once, as an empty chunk', async () => {
    const timings = new ChunkTimings(Promise.resolve(READING));
    await Promise.resolve();
    timings.chunk(new Float32Array(300), RATE);
    expect(timings.pending(RATE)).toBeUndefined();
    timings.addPhonemes([phoneme('h', 0, 100), phoneme('aɪ', 100, 200)]);
    const now = timings.pending(RATE)!;
    expect(now.pcm).toHaveLength(0);
    // Relative to where the next audio starts (300 ms): in the audio already handed out.
    expect(now.phonemes.map((p) => p.startMs)).toEqual([-300, -200]);
    expect(timings.pending(RATE)).toBeUndefined();
  });

  it('phonemizes characters as they come, and words then carry none of their own', async () => {
    const timings = new ChunkTimings(Promise.resolve(READING));
    await Promise.resolve();
    timings.addChars([{ charIndex: 0, startMs: 0, endMs: 100 }]);
    timings.addWords([], false);
    const first = timings.chunk(new Float32Array(100), RATE);
    // 'h' is the first half of espeak's 0-300 ms for "hi": both its phonemes start there.
    expect(first.phonemes.map((p) => p.ipa)).toEqual(['h', 'aɪ']);
    timings.addChars([{ charIndex: 1, startMs: 100, endMs: 200 }]);
    timings.addWords([word('hi', 0, 0, 200)], false);
    const second = timings.chunk(new Float32Array(100), RATE);
    expect(second.phonemes).toEqual([]);
    expect(second.words).toHaveLength(1);
  });

  it('hands out audio at once and places timings that arrive later relative to each chunk', async () => {
    let resolve!: (r: Phonemized) => void;
    const timings = new ChunkTimings(new Promise<Phonemized>((r) => (resolve = r)));
    timings.addWords([word('hi', 0, 0, 200)], true);
    // The phonemizer has not answered: the first chunk goes out with its words only.
    const first = timings.chunk(new Float32Array(250), RATE);
    expect(first.words).toHaveLength(1);
    expect(first.phonemes).toHaveLength(0);
    resolve(READING);
    await Promise.resolve();
    timings.addWords([word('you', 3, 300, 500)], true);
    const second = timings.chunk(new Float32Array(250), RATE);
    // Both words' phonemes now, relative to the second chunk (which starts at 250 ms): "hi"
    // lies before it (negative times), "you" inside it.
    expect(second.phonemes.map((p) => p.ipa)).toEqual(['h', 'aɪ', 'j', 'uː']);
    expect(second.phonemes[0]!.startMs).toBe(-250);
    expect(second.phonemes[2]!.startMs).toBe(50);
    expect(second.words).toEqual([word('you', 3, 50, 250)]);
    expect(await timings.finish(RATE)).toBeUndefined();
  });
});
