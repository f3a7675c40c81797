import { describe, expect, it } from 'vitest';
import { ChunkTimings } from '../../../src/media/tts/providers/chunkTimings.js';
import {
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

describe('ChunkTimings', () => {
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
