// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { readFileSync } from 'node:fs';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeAudio } from '../../../src/media/audio/index.js';
import {
  CartesiaEngine,
  ElevenLabsEngine,
  stopEspeakThread,
  TtsProviderError,
  TtsProviderUnavailableError,
  type SpeechChunk,
  type TtsEngine,
  type VoiceSource,
} from '../../../src/media/tts/index.js';
import { analyzeVoiceClip } from '../../../src/media/voice/index.js';
import { CartesiaFake } from '../../fakes/cartesiaFake.js';
import { ElevenLabsFake } from '../../fakes/elevenLabsFake.js';
import type { FakeProvider } from '../../fakes/fakeProvider.js';

const log = pino({ level: 'silent' });
const TEXT = 'Hello there, my friend. This is a cloned voice speaking through the provider.';
let source: VoiceSource;

beforeAll(async () => {
  const bytes = new Uint8Array(
    readFileSync(new URL('../../fixtures/audio/voice-flite-slt-female.mp3', import.meta.url)),
  );
  const clip = await decodeAudio(bytes);
  source = {
    name: 'Test speaker',
    clip: { bytes, contentType: 'audio/mpeg', mono: clip.mono, sampleRate: clip.sampleRate },
    analysis: await analyzeVoiceClip(clip.mono, clip.sampleRate),
  };
}, 30_000);

afterAll(() => stopEspeakThread());

async function collect(iterable: AsyncIterable<SpeechChunk>, onChunk?: (n: number) => void) {
  const chunks: SpeechChunk[] = [];
  for await (const c of iterable) {
    chunks.push(c);
    onChunk?.(chunks.length);
  }
  return chunks;
}

interface Case {
  name: string;
  fake: () => FakeProvider & {
    clones: unknown[];
    generations: { cancelled: boolean; done: boolean; chunksSent: number }[];
  };
  engine: (baseUrl: string, key: string) => TtsEngine;
}

const CASES: Case[] = [
  {
    name: 'cartesia',
    fake: () => new CartesiaFake(),
    engine: (baseUrl, apiKey) => new CartesiaEngine({ baseUrl, apiKey }),
  },
  {
    name: 'elevenlabs',
    fake: () => new ElevenLabsFake(),
    engine: (baseUrl, apiKey) => new ElevenLabsEngine({ baseUrl, apiKey }),
  },
];

describe.each(CASES)('$name engine against its fake', ({ fake: makeFake, engine: makeEngine }) => {
  let fake: ReturnType<Case['fake']>;
  let baseUrl: string;
  let engine: TtsEngine;

  beforeAll(async () => {
    fake = makeFake();
    baseUrl = await fake.listen();
    engine = makeEngine(baseUrl, fake.apiKey);
  });
  afterAll(async () => {
    await engine.close();
    await fake.close();
  });

  it('checks the key at start: accepted, or refused with the provider reason', async () => {
    await expect(engine.prepare()).resolves.toBeUndefined();
    const wrong = makeEngine(baseUrl, 'not-the-key');
    const err = await wrong.prepare().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TtsProviderError);
    expect((err as TtsProviderError).status).toBe(401);
    expect((err as Error).message).toContain('Invalid API key');
    expect((err as Error).message).not.toContain('not-the-key');
  });

  it('clones from the clip as uploaded, and says why when the provider refuses or is gone', async () => {
    const stored = await engine.createVoice(source);
    expect(fake.clones.at(-1)).toMatchObject({
      name: 'Test speaker',
      clipBytes: source.clip.bytes.length,
    });
    expect(stored).toMatchObject({ schema: 'visage.provider-voice/1' });

    fake.fail(500, 1);
    await expect(engine.createVoice(source)).rejects.toThrow(/500: Internal/);
    fake.fail(429, 2); // retried within the bound, then it succeeds
    await expect(engine.createVoice(source)).resolves.toBeTruthy();
    fake.fail(429);
    await expect(engine.createVoice(source)).rejects.toBeInstanceOf(TtsProviderError);
    fake.heal();
    const closed = makeFake();
    const closedUrl = await closed.listen();
    await closed.close();
    const gone = makeEngine(closedUrl, fake.apiKey);
    await expect(gone.createVoice(source)).rejects.toBeInstanceOf(TtsProviderUnavailableError);
  }, 20_000);

  it('streams audio as it comes, with word and phoneme timings on its time line', async () => {
    const stored = await engine.createVoice(source);
    const channel = engine.openChannel({ voiceId: 'vc_x', stored }, log);
    fake.behaviour.chunkIntervalMs = 40;
    const generationsBefore = fake.generations.length;
    let doneAtFirstChunk: boolean | undefined;
    const chunks = await collect(channel.speak(TEXT, new AbortController().signal), (n) => {
      if (n === 1) doneAtFirstChunk = fake.generations[generationsBefore]?.done;
    });
    fake.behaviour.chunkIntervalMs = 0;
    // The first chunk came while the provider was still generating.
    expect(doneAtFirstChunk).toBe(false);
    const samples = chunks.reduce((n, c) => n + c.pcm.length, 0);
    const seconds = samples / chunks[0]!.sampleRate;
    expect(seconds).toBeGreaterThan(2);
    // Words on the utterance's time line, in order, covering the text.
    let offsetMs = 0;
    const words: { text: string; startMs: number; charStart: number }[] = [];
    const phonemes: number[] = [];
    for (const c of chunks) {
      for (const w of c.words) words.push({ ...w, startMs: w.startMs + offsetMs });
      for (const p of c.phonemes) phonemes.push(p.startMs + offsetMs);
      offsetMs += (c.pcm.length / c.sampleRate) * 1000;
    }
    expect(words.map((w) => w.text.replace(/[,.]/g, '')).join(' ')).toBe(TEXT.replace(/[,.]/g, ''));
    for (const w of words)
      expect(TEXT.slice(w.charStart)).toMatch(new RegExp(`^${w.text.slice(0, 3)}`));
    for (let i = 1; i < words.length; i++)
      expect(words[i]!.startMs).toBeGreaterThanOrEqual(words[i - 1]!.startMs);
    expect(words.at(-1)!.startMs).toBeGreaterThan(seconds * 1000 * 0.6);
    expect(phonemes.length).toBeGreaterThan(30);
    expect(Math.max(...phonemes)).toBeLessThanOrEqual(seconds * 1000 + 50);
    channel.close();
  }, 20_000);

  it('cancels the provider stream at once on interrupt', async () => {
    const stored = await engine.createVoice(source);
    const channel = engine.openChannel({ voiceId: 'vc_x', stored }, log);
    fake.behaviour.chunkIntervalMs = 100; // real time
    const abort = new AbortController();
    const chunks = await collect(channel.speak(TEXT, abort.signal), (n) => {
      if (n === 3) abort.abort();
    });
    expect(chunks).toHaveLength(3);
    const g = fake.generations.at(-1)!;
    await expect.poll(() => g.cancelled, { timeout: 3_000 }).toBe(true);
    const sent = g.chunksSent;
    await sleep(400);
    expect(g.chunksSent).toBeLessThanOrEqual(sent + 1);
    expect(g.done).toBe(false);
    // The channel keeps working after an interrupt.
    fake.behaviour.chunkIntervalMs = 0;
    expect(
      (await collect(channel.speak('Still here.', new AbortController().signal))).length,
    ).toBeGreaterThan(0);
    channel.close();
  }, 20_000);

  it('fails the utterance when the connection drops mid-stream, and recovers for the next', async () => {
    const stored = await engine.createVoice(source);
    const channel = engine.openChannel({ voiceId: 'vc_x', stored }, log);
    fake.behaviour.dropAfterChunks = 2;
    const got: SpeechChunk[] = [];
    const err = await (async () => {
      for await (const c of channel.speak(TEXT, new AbortController().signal)) got.push(c);
    })().catch((e: unknown) => e);
    fake.behaviour.dropAfterChunks = null;
    // Two chunks of audio (timings that follow their audio may come as chunks of their own).
    expect(got.filter((c) => c.pcm.length > 0)).toHaveLength(2);
    expect(err).toBeInstanceOf(Error);
    expect(err instanceof TtsProviderUnavailableError || err instanceof TtsProviderError).toBe(
      true,
    );
    expect(
      (await collect(channel.speak('Back again.', new AbortController().signal))).length,
    ).toBeGreaterThan(0);
    channel.close();
  }, 20_000);

  it('retries a 429 at the socket within a bound', async () => {
    const stored = await engine.createVoice(source);
    fake.fail(429, 2);
    const channel = engine.openChannel({ voiceId: 'vc_x', stored }, log);
    const chunks = await collect(channel.speak('Once more.', new AbortController().signal));
    fake.heal();
    expect(chunks.length).toBeGreaterThan(0);
    channel.close();
  }, 20_000);
});

describe('cartesia rate limits on an open socket', () => {
  it('retries a 429 error message for a context within a bound, then fails typed', async () => {
    const fake = new CartesiaFake();
    const engine = new CartesiaEngine({ baseUrl: await fake.listen(), apiKey: fake.apiKey });
    try {
      const stored = await engine.createVoice(source);
      const channel = engine.openChannel({ voiceId: 'vc_x', stored }, log);
      fake.rateLimitedGenerations = 2;
      const chunks = await collect(channel.speak('Once more.', new AbortController().signal));
      expect(fake.rateLimitedSent).toBe(2);
      expect(chunks.some((c) => c.pcm.length > 0)).toBe(true);
      // Past the bound: a typed error with the provider's status, no audio.
      fake.rateLimitedGenerations = 100;
      const err = await collect(channel.speak('And again.', new AbortController().signal)).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TtsProviderError);
      expect((err as TtsProviderError).status).toBe(429);
      channel.close();
    } finally {
      await engine.close();
      await fake.close();
    }
  }, 60_000);
});

describe('cartesia without phoneme timestamps', () => {
  it("phonemizes the provider's timed words with espeak-ng, so the mouth still has phonemes", async () => {
    const fake = new CartesiaFake();
    const engine = new CartesiaEngine({ baseUrl: await fake.listen(), apiKey: fake.apiKey });
    try {
      fake.behaviour.phonemeTimestamps = false;
      const stored = await engine.createVoice(source);
      const channel = engine.openChannel({ voiceId: 'vc_x', stored }, log);
      const chunks = await collect(channel.speak(TEXT, new AbortController().signal));
      channel.close();
      const phonemes = chunks.flatMap((c) => c.phonemes);
      const words = chunks.flatMap((c) => c.words);
      expect(words.length).toBeGreaterThan(10);
      expect(phonemes.length).toBeGreaterThan(30);
    } finally {
      await engine.close();
      await fake.close();
    }
  }, 20_000);
});
