// SPDX-License-Identifier: GPL-3.0-or-later
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTtsEngine,
  checkTtsOptions,
  defaultVoiceProfile,
  EspeakEngine,
  stockVoiceProfile,
  TtsEngines,
  stopEspeakThread,
  synthesizeSentences,
  TtsEngineUnavailableError,
  type SentenceSynthesis,
  type SynthesisResult,
} from '../../../src/media/tts/index.js';
import { PAUSE_MS, phraseChunk } from '../../../src/media/tts/espeakPhrasing.js';
import { pitchStatistics, trackPitch } from '../../../src/media/voice/index.js';

const engine = new EspeakEngine();
const voice = defaultVoiceProfile();
const SENTENCE =
  'The quick brown fox jumps over the lazy dog while our avatar keeps talking clearly.';

function rms(x: Float32Array, from = 0, to = x.length): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += x[i]! * x[i]!;
  return Math.sqrt(sum / Math.max(1, to - from));
}

let result: SynthesisResult;

beforeAll(async () => {
  await engine.warmUp();
  result = await engine.synthesize(SENTENCE, voice);
});

afterAll(async () => {
  await stopEspeakThread();
});

describe('EspeakEngine', () => {
  it('produces speech-like audio: 22.05 kHz, a few seconds, loud enough, F0 in the male range', () => {
    expect(result.sampleRate).toBe(22050);
    const seconds = result.pcm.length / result.sampleRate;
    expect(seconds).toBeGreaterThan(3.5);
    expect(seconds).toBeLessThan(7);
    expect(rms(result.pcm)).toBeGreaterThan(0.02);
    const pitch = pitchStatistics(trackPitch(result.pcm, result.sampleRate));
    expect(pitch.medianHz).toBeGreaterThan(85);
    expect(pitch.medianHz).toBeLessThan(125);
    expect(pitch.voicedFraction).toBeGreaterThan(0.2);
  });

  it('gives monotonic word timings that cover the text, in order', () => {
    const { words } = result;
    expect(words.map((w) => w.text)).toEqual(SENTENCE.replace('.', '').split(' '));
    let previousStart = -1;
    for (const w of words) {
      expect(w.startMs).toBeGreaterThan(previousStart);
      expect(w.endMs).toBeGreaterThan(w.startMs);
      expect(SENTENCE.slice(w.charStart, w.charEnd)).toBe(w.text);
      previousStart = w.startMs;
    }
    const durationMs = (result.pcm.length / result.sampleRate) * 1000;
    expect(words[0]!.startMs).toBeLessThan(200);
    expect(words.at(-1)!.endMs).toBeGreaterThan(durationMs - 600);
    expect(words.at(-1)!.endMs).toBeLessThanOrEqual(durationMs);
  });

  it('gives IPA phonemes with timings inside the audio, loud where a phoneme is', () => {
    const { phonemes, pcm, sampleRate } = result;
    expect(phonemes.length).toBeGreaterThan(40);
    expect(phonemes.map((p) => p.ipa).slice(0, 2)).toEqual(['ð', 'ə']);
    expect(phonemes.some((p) => p.stressed)).toBe(true);
    for (const p of phonemes) expect(p.ipa).not.toMatch(/[ˈˌ]/u);
    const durationMs = (pcm.length / sampleRate) * 1000;
    let previous = -1;
    for (const p of phonemes) {
      expect(p.startMs).toBeGreaterThanOrEqual(previous);
      expect(p.endMs).toBeGreaterThan(p.startMs);
      expect(p.endMs).toBeLessThanOrEqual(durationMs);
      previous = p.startMs;
    }
    // Vowels carry energy: the audio under them is far louder than the silence after the text.
    const vowels = phonemes.filter((p) => /[aeiouɑæɪʊʌəɛɔ]/u.test(p.ipa));
    const at = (ms: number) => Math.round((ms * sampleRate) / 1000);
    const vowelRms =
      vowels.reduce((s, p) => s + rms(pcm, at(p.startMs), at(p.endMs)), 0) / vowels.length;
    expect(vowelRms).toBeGreaterThan(0.05);
  });

  it('maps word offsets for non-ASCII text and merges spoken-out numbers into one word', async () => {
    const text = 'Café 😀 costs $3.50, okay?';
    const out = await engine.synthesize(text, voice);
    for (const w of out.words) expect(text.slice(w.charStart, w.charEnd)).toBe(w.text);
    expect(out.words.map((w) => w.text)).toContain('$3.50'); // one word, not "$" + "3" + ".50"
    expect(out.words.map((w) => w.text)).toContain('Café');
    expect(out.words.at(-1)!.text).toBe('okay');
  });

  it('keeps whole tokens as words: apostrophes, digit groups, long words', async () => {
    const text = "It's 1,000,000 well-known o'clock, supercalifragilisticexpialidocious!";
    const out = await engine.synthesize(text, voice);
    expect(out.words.map((w) => w.text)).toEqual([
      "It's",
      '1,000,000',
      'well-known',
      "o'clock",
      'supercalifragilisticexpialidocious',
    ]);
  });

  it('treats markup as plain text: SSML in caller text cannot inject pauses', async () => {
    const out = await engine.synthesize('one <break time="30s"/> two', voice);
    expect(out.pcm.length / out.sampleRate).toBeLessThan(5);
    expect(out.words.map((w) => w.text)).toContain('two');
    const hearts = await engine.synthesize('I <3 you &amp; me', voice);
    for (const w of hearts.words) {
      expect('I <3 you &amp; me'.slice(w.charStart, w.charEnd)).toBe(w.text);
    }
    expect(hearts.words.map((w) => w.text)).toContain('you');
  });

  it('applies the voice: a female stock voice is about an octave-ish higher than a male one', async () => {
    const ada = await engine.synthesize(
      SENTENCE,
      stockVoiceProfile('voice_Ada000000000000000000001')!,
    );
    const milo = await engine.synthesize(
      SENTENCE,
      stockVoiceProfile('voice_Milo00000000000000000001')!,
    );
    const adaF0 = pitchStatistics(trackPitch(ada.pcm, ada.sampleRate)).medianHz;
    const miloF0 = pitchStatistics(trackPitch(milo.pcm, milo.sampleRate)).medianHz;
    expect(adaF0).toBeGreaterThan(175);
    expect(adaF0).toBeLessThan(215);
    expect(miloF0).toBeGreaterThan(95);
    expect(miloF0).toBeLessThan(125);
  });

  it('synthesizes a 15-word sentence in well under 100 ms of CPU once warm', async () => {
    const times: number[] = [];
    const cpu = process.cpuUsage(); // all threads of this process, the espeak thread included
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      await engine.synthesize(SENTENCE, voice);
      times.push(performance.now() - t);
    }
    const { user, system } = process.cpuUsage(cpu);
    expect((user + system) / 1000 / 5).toBeLessThan(100);
    times.sort((a, b) => a - b);
    expect(times[2]!).toBeLessThan(2_000); // wall time: sane even on a busy machine
  });

  it('returns empty audio for blank text and honours an aborted signal', async () => {
    const blank = await engine.synthesize('  \n', voice);
    expect(blank.pcm.length).toBe(0);
    const controller = new AbortController();
    controller.abort();
    await expect(
      engine.synthesize(SENTENCE, voice, { signal: controller.signal }),
    ).rejects.toThrow();
  });
});

describe('EspeakEngine threads', () => {
  it('runs off the event loop by default and gives the same result as inline synthesis', async () => {
    expect(engine.runsOn).toBe('thread');
    const inline = new EspeakEngine({ runsOn: 'caller' });
    const a = await inline.synthesize(SENTENCE, voice);
    // espeak adds a little random jitter to its output, so compare shape, not samples.
    expect(Math.abs(a.pcm.length - result.pcm.length)).toBeLessThan(result.sampleRate * 0.05);
    expect(a.words.map((w) => [w.text, w.charStart])).toEqual(
      result.words.map((w) => [w.text, w.charStart]),
    );
    expect(a.phonemes.map((p) => p.ipa)).toEqual(result.phonemes.map((p) => p.ipa));
  });

  it('keeps the event loop responsive while its thread synthesizes', async () => {
    const longestStall = async (run: () => Promise<unknown>) => {
      let maxGap = 0;
      let last = performance.now();
      const timer = setInterval(() => {
        const now = performance.now();
        maxGap = Math.max(maxGap, now - last);
        last = now;
      }, 2);
      await run();
      clearInterval(timer);
      return Math.max(maxGap, performance.now() - last);
    };
    const long = Array.from({ length: 6 }, () => SENTENCE).join(' ');
    const inline = new EspeakEngine({ runsOn: 'caller' });
    await inline.warmUp();
    const inlineStall = await longestStall(() => inline.synthesize(long, voice));
    const workerStall = await longestStall(() => engine.synthesize(long, voice));
    // Inline, the whole synthesis (~100-300 ms) blocks the loop; off-thread only the timing
    // post-processing runs on it.
    expect(workerStall).toBeLessThan(inlineStall / 2);
  });

  it('recovers after the thread is stopped: the next call starts a fresh one', async () => {
    await stopEspeakThread();
    const out = await engine.synthesize('Still here.', voice);
    expect(out.words.map((w) => w.text)).toEqual(['Still', 'here']);
  });
});

describe('synthesizeSentences', () => {
  it('yields every sentence, in order, with word offsets into the full text', async () => {
    const text = 'Dr. Lee arrived at 9.30 today. She asked for tea! Then she left.';
    const seen: string[] = [];
    for await (const piece of synthesizeSentences(engine, text, voice)) {
      expect(piece.pcm.length).toBeGreaterThan(0);
      for (const w of piece.words) {
        expect(text.slice(w.charStart, w.charEnd)).toBe(w.text);
      }
      if (piece.last) seen.push(piece.chunk.text);
    }
    expect(seen).toEqual([
      'Dr. Lee arrived at 9.30 today.',
      'She asked for tea!',
      'Then she left.',
    ]);
  });

  it('streams the first sentence as espeak-ng produces it, each piece with the words that start in it', async () => {
    const text = `${SENTENCE} Then it stops.`;
    const pieces: SentenceSynthesis[] = [];
    for await (const piece of synthesizeSentences(engine, text, voice)) pieces.push(piece);
    const first = pieces.filter((p) => p.index === 0);
    // A 4 s sentence comes in several pieces (espeak-ng makes 100 ms at a time); the last one
    // carries the phonemes, relative to its own first sample.
    expect(first.length).toBeGreaterThan(2);
    expect(first.slice(0, -1).every((p) => !p.last && p.phonemes.length === 0)).toBe(true);
    expect(first.at(-1)!.last).toBe(true);
    const rate = first[0]!.sampleRate;
    const streamed = new Float32Array(first.reduce((n, p) => n + p.pcm.length, 0));
    /** Each piece's start on the sentence's timeline, ms. */
    const startsMs: number[] = [];
    let at = 0;
    for (const p of first) {
      startsMs.push((at / rate) * 1000);
      streamed.set(p.pcm, at);
      at += p.pcm.length;
    }
    // Every piece but the last ends on sound: the sentence's own trailing silence is held back
    // and becomes the phrased pause, which the last piece ends with.
    for (const p of first.slice(0, -1))
      expect(Math.abs(p.pcm.at(-1)!)).toBeGreaterThanOrEqual(0.01);
    const pause = Math.round((PAUSE_MS.sentence / 1000) * rate);
    expect(rms(streamed, streamed.length - pause)).toBe(0);
    // The words come with the audio they start in, not all at the end: a word is known as soon
    // as it can be heard, however long the rest of the sentence takes to synthesize.
    const early = first.slice(0, -1).flatMap((p) => p.words);
    expect(early.length).toBeGreaterThan(0);
    for (const p of first.slice(0, -1)) {
      const ms = (p.pcm.length / rate) * 1000;
      for (const w of p.words) {
        expect(w.startMs).toBeGreaterThanOrEqual(0);
        expect(w.startMs).toBeLessThan(ms);
      }
    }
    // The same sentence synthesized whole and phrased as the first of two: the same length, and
    // each word once, at the same time (espeak-ng's noise source makes two runs differ by a few
    // samples).
    const whole = phraseChunk(await engine.synthesize(SENTENCE, voice), {
      first: true,
      pauseAfterMs: PAUSE_MS.sentence,
    });
    expect(Math.abs(streamed.length - whole.pcm.length)).toBeLessThan(rate / 100);
    const words = first.flatMap((p, i) =>
      p.words.map((w) => ({ ...w, startMs: w.startMs + startsMs[i]! })),
    );
    expect(words.map((w) => w.text)).toEqual(whole.words.map((w) => w.text));
    words.forEach((w, i) => {
      expect(Math.abs(w.startMs - whole.words[i]!.startMs)).toBeLessThan(2);
      expect(text.slice(w.charStart, w.charEnd)).toBe(w.text);
    });
    expect(first.at(-1)!.phonemes.length).toBe(whole.phonemes.length);
    expect(pieces.filter((p) => p.index === 1)).toHaveLength(1);
  });

  it('asks the engine for the first chunk before the look-ahead of the next', async () => {
    const asked: string[] = [];
    const watched = Object.create(engine) as EspeakEngine;
    watched.synthesize = (text, v, opts) => {
      asked.push(text);
      return engine.synthesize(text, v, opts);
    };
    const pieces = synthesizeSentences(watched, 'First sentence here. Second one follows.', voice);
    await pieces.next();
    // The synthesis thread serves requests in order: the look-ahead asked for first would delay
    // the first audio, and the first sentence's words, by its own synthesis.
    expect(asked).toEqual(['First sentence here.', 'Second one follows.']);
    await pieces.return(undefined);
  });

  it('inline synthesis gives the first sentence in one piece', async () => {
    const inline = new EspeakEngine({ runsOn: 'caller' });
    const pieces: SentenceSynthesis[] = [];
    for await (const piece of synthesizeSentences(inline, SENTENCE, voice)) pieces.push(piece);
    expect(pieces).toHaveLength(1);
    expect(pieces[0]!.last).toBe(true);
  });
});

describe('createTtsEngine / TtsEngines', () => {
  it('defaults to espeak on its shared thread, and takes the default engine from its options', () => {
    expect(new TtsEngines({}).default.id).toBe('espeak');
    expect(new TtsEngines({ defaultEngine: 'cartesia' }).defaultId).toBe('cartesia');
    const shared = createTtsEngine('espeak', {}) as EspeakEngine;
    expect(shared.runsOn).toBe('thread');
    const caller = createTtsEngine('espeak', { espeakOn: 'caller' }) as EspeakEngine;
    expect(caller.runsOn).toBe('caller');
  });

  it('refuses a provider engine without its key', () => {
    expect(() => createTtsEngine('elevenlabs', {})).toThrow(TtsEngineUnavailableError);
    expect(() => createTtsEngine('cartesia', { cartesia: { apiKey: ' ' } })).toThrow(
      /no API key was given/,
    );
    expect(createTtsEngine('cartesia', { cartesia: { apiKey: 'k' } }).id).toBe('cartesia');
    expect(() => checkTtsOptions({ defaultEngine: 'elevenlabs' })).toThrow(
      TtsEngineUnavailableError,
    );
    expect(checkTtsOptions({})).toBe('espeak');
  });
});
