// SPDX-License-Identifier: GPL-3.0-or-later
import { describe, expect, it } from 'vitest';
import { WordAssembler } from '../../../src/media/tts/elevenlabs/elevenLabsAlignment.js';

describe('ElevenLabs character alignment to words', () => {
  const chars = ['H', 'i', ' ', 'y', 'o', 'u'];
  const starts = [0, 50, 100, 150, 200, 250];
  const durations = [50, 50, 50, 50, 50, 60];

  it("reads the service's spelling (charsDurationsMs) and ends words where their last character does", () => {
    const words = new WordAssembler('Hi you');
    const done = words.push({ chars, charStartTimesMs: starts, charsDurationsMs: durations }, 1000);
    const all = [...done.words, ...words.flush()];
    expect(all.map((w) => [w.text, w.startMs, w.endMs, w.charStart, w.charEnd])).toEqual([
      ['Hi', 1000, 1100, 0, 2],
      ['you', 1150, 1310, 3, 6],
    ]);
  });

  it('reads the singular spellings too, and words split across messages', () => {
    const words = new WordAssembler('Hi you');
    const first = words.push(
      {
        chars: chars.slice(0, 4),
        charsStartTimesMs: starts.slice(0, 4),
        charDurationsMs: durations.slice(0, 4),
      },
      0,
    );
    expect(first.words.map((w) => w.text)).toEqual(['Hi']);
    // Every character but the space, placed in the text, before its word is complete.
    expect(first.chars).toEqual([
      { charIndex: 0, startMs: 0, endMs: 50 },
      { charIndex: 1, startMs: 50, endMs: 100 },
      { charIndex: 3, startMs: 150, endMs: 200 },
    ]);
    words.push(
      { chars: chars.slice(4), charStartTimesMs: [0, 50], charsDurationsMs: [50, 60] },
      200,
    );
    const [you] = words.flush();
    expect([you!.text, you!.startMs, you!.endMs]).toEqual(['you', 150, 310]);
  });
});
