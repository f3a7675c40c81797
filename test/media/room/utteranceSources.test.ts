// SPDX-License-Identifier: GPL-3.0-or-later
// What a session's player is handed for text spoken by its engine: pieces small enough that one
// utterance's start never holds the media process's event loop (the other avatars' frames).
import { describe, expect, it } from 'vitest';
import { resample } from '../../../src/media/audio/index.js';
import { audioUtterance, speechUtterance } from '../../../src/media/room/utteranceSources.js';
import type { AudioChunk } from '../../../src/media/room/utterance.js';
import type { SpeechChannel, SpeechChunk } from '../../../src/media/tts/index.js';

const sine = (rate: number, seconds: number) =>
  Float32Array.from({ length: Math.round(rate * seconds) }, (_, i) =>
    Math.sin((2 * Math.PI * 220 * i) / rate),
  );

/** An engine that hands over the given chunks at once. */
const engine = (chunks: SpeechChunk[]): SpeechChannel => ({
  async *speak() {
    yield* chunks;
  },
  close() {},
});

async function collect(chunks: SpeechChunk[], signal = new AbortController().signal) {
  const out: AudioChunk[] = [];
  for await (const c of speechUtterance('u', 'Hello there.', engine(chunks)).chunks(signal)) {
    out.push(c);
  }
  return out;
}

const word = { text: 'Hello', startMs: 0, endMs: 400, charStart: 0, charEnd: 5 };

describe('speechUtterance', () => {
  it('hands a whole sentence over in pieces of at most 100 ms, timings on the first', async () => {
    const pcm = sine(22_050, 3);
    const out = await collect([{ sampleRate: 22_050, pcm, words: [word], phonemes: [] }]);
    // 3 s at 48 kHz in pieces of about 4,800 samples (the resampler holds back a few).
    expect(out.length).toBeGreaterThanOrEqual(30);
    for (const c of out) expect(c.pcm.length).toBeLessThanOrEqual(4_800 + 64);
    expect(out[0]!.words).toEqual([word]);
    expect(out.slice(1).every((c) => c.words === undefined)).toBe(true);
    // The same audio as resampling it whole, give or take the filter's edges.
    const total = out.reduce((n, c) => n + c.pcm.length, 0);
    expect(Math.abs(total - resample(pcm, 22_050, 48_000).length)).toBeLessThanOrEqual(2);
  });

  it('passes 48 kHz audio through in 100 ms slices, and a chunk of timings alone too', async () => {
    const pcm = sine(48_000, 1);
    const late = { ...word, startMs: -900, endMs: -500 };
    const out = await collect([
      { sampleRate: 48_000, pcm, words: [], phonemes: [] },
      { sampleRate: 48_000, pcm: new Float32Array(0), words: [late], phonemes: [] },
    ]);
    expect(out.map((c) => c.pcm.length)).toEqual([...Array(10).fill(4_800), 0]);
    expect(out[0]!.pcm.buffer).toBe(pcm.buffer);
    expect(out.at(-1)!.words).toEqual([late]);
  });

  it('stops between pieces once aborted', async () => {
    const abort = new AbortController();
    const pieces: AudioChunk[] = [];
    const chunks = [{ sampleRate: 48_000, pcm: sine(48_000, 2), words: [], phonemes: [] }];
    for await (const c of speechUtterance('u', 'x', engine(chunks)).chunks(abort.signal)) {
      pieces.push(c);
      if (pieces.length === 3) abort.abort();
    }
    expect(pieces.length).toBe(3);
  });
});

describe('audioUtterance', () => {
  const played = async (pcm: Float32Array, rate: number, signal = new AbortController().signal) => {
    const out: AudioChunk[] = [];
    for await (const c of audioUtterance('u', pcm, rate, null).chunks(signal)) out.push(c);
    return out;
  };

  it('resamples an uploaded clip piece by piece, the same audio as resampling it whole', async () => {
    // 30 s at 16 kHz: resampled whole, this held the media process's event loop for about 100 ms.
    const pcm = sine(16_000, 30);
    const out = await played(pcm, 16_000);
    expect(out.length).toBeGreaterThanOrEqual(300);
    for (const c of out) expect(c.pcm.length).toBeLessThanOrEqual(4_800 + 64);
    const joined = new Float32Array(out.reduce((n, c) => n + c.pcm.length, 0));
    let at = 0;
    for (const c of out) {
      joined.set(c.pcm, at);
      at += c.pcm.length;
    }
    const whole = resample(pcm, 16_000, 48_000);
    expect(joined.length).toBe(whole.length);
    let worst = 0;
    for (let i = 0; i < whole.length; i++)
      worst = Math.max(worst, Math.abs(joined[i]! - whole[i]!));
    expect(worst).toBeLessThan(1e-6);
  });

  it('passes 48 kHz audio through in 100 ms slices of the same buffer', async () => {
    const pcm = sine(48_000, 1.05);
    const out = await played(pcm, 48_000);
    expect(out.map((c) => c.pcm.length)).toEqual([...Array(10).fill(4_800), 2_400]);
    expect(out.every((c) => c.pcm.buffer === pcm.buffer)).toBe(true);
  });

  it('stops between pieces once aborted', async () => {
    const abort = new AbortController();
    const pieces: AudioChunk[] = [];
    for await (const c of audioUtterance('u', sine(24_000, 5), 24_000, null).chunks(abort.signal)) {
      pieces.push(c);
      if (pieces.length === 2) abort.abort();
    }
    expect(pieces.length).toBe(2);
  });
});
