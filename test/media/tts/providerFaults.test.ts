// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { readFileSync } from 'node:fs';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeAudio } from '../../../src/media/audio/index.js';
import {
  CartesiaEngine,
  ElevenLabsEngine,
  stopEspeakThread,
  TtsProviderError,
  type SpeechChunk,
  type SpeechChannel,
  type TtsEngine,
  type VoiceSource,
} from '../../../src/media/tts/index.js';
import { analyzeVoiceClip } from '../../../src/media/voice/index.js';
import { CartesiaFake } from '../../fakes/cartesiaFake.js';
import { ElevenLabsFake } from '../../fakes/elevenLabsFake.js';

/**
 * A provider's rate limit or overload that arrives inside the open socket, after the handshake
 * succeeded, is retried like a 429 at the handshake (the same bound), before any audio; past the
 * bound the utterance fails with the provider's status.
 */

const log = pino({ level: 'silent' });
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

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function collect(iterable: AsyncIterable<SpeechChunk>): Promise<SpeechChunk[]> {
  const chunks: SpeechChunk[] = [];
  for await (const c of iterable) chunks.push(c);
  return chunks;
}

async function channelOn(
  fake: ElevenLabsFake | CartesiaFake,
  engineFor: (baseUrl: string, apiKey: string) => TtsEngine,
): Promise<SpeechChannel> {
  const engine = engineFor(await fake.listen(), fake.apiKey);
  cleanups.push(
    () => fake.close(),
    () => engine.close(),
  );
  const channel = engine.openChannel(
    { voiceId: 'vc_x', stored: await engine.createVoice(source) },
    log,
  );
  cleanups.push(() => channel.close());
  return channel;
}

const heard = (chunks: SpeechChunk[]) => chunks.some((c) => c.pcm.length > 0);
const words = (chunks: SpeechChunk[]) => chunks.flatMap((c) => c.words.map((w) => w.text));

describe('elevenlabs: too_many_concurrent_requests inside the open stream-input socket', () => {
  it('is retried within the bound, and the utterance is spoken whole', async () => {
    const fake = new ElevenLabsFake();
    const channel = await channelOn(
      fake,
      (baseUrl, apiKey) => new ElevenLabsEngine({ baseUrl, apiKey }),
    );
    fake.busyGenerations = 2;
    const chunks = await collect(
      channel.speak('Hello there, friend.', new AbortController().signal),
    );
    expect(fake.busySent).toBe(2);
    expect(heard(chunks)).toBe(true);
    expect(words(chunks).join(' ')).toContain('friend');
    expect(fake.generations.map((g) => g.text)).toEqual(['Hello there, friend.']);
  }, 30_000);

  it('past the bound fails the utterance with the status of a 429, with nothing heard', async () => {
    const fake = new ElevenLabsFake();
    const channel = await channelOn(
      fake,
      (baseUrl, apiKey) => new ElevenLabsEngine({ baseUrl, apiKey }),
    );
    fake.busyGenerations = 100;
    const got: SpeechChunk[] = [];
    const err = await (async () => {
      for await (const c of channel.speak('Not now.', new AbortController().signal)) got.push(c);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TtsProviderError);
    expect((err as TtsProviderError).status).toBe(429);
    expect((err as Error).message).toContain('too_many_concurrent_requests');
    // The first try and three more: the bound of a 429 at the handshake.
    expect(fake.busySent).toBe(4);
    expect(got).toEqual([]);
    // The channel speaks again once the provider has room.
    fake.busyGenerations = 0;
    expect(heard(await collect(channel.speak('Now then.', new AbortController().signal)))).toBe(
      true,
    );
  }, 30_000);

  it('an interrupt while waiting to retry ends the utterance quietly', async () => {
    const fake = new ElevenLabsFake();
    const channel = await channelOn(
      fake,
      (baseUrl, apiKey) => new ElevenLabsEngine({ baseUrl, apiKey }),
    );
    fake.busyGenerations = 100;
    const interrupt = new AbortController();
    const speaking = collect(channel.speak('Not now.', interrupt.signal));
    await expect.poll(() => fake.busySent, { timeout: 5_000 }).toBeGreaterThan(0);
    interrupt.abort();
    expect(await speaking).toEqual([]);
    const sent = fake.busySent;
    await sleep(1_200);
    expect(fake.busySent).toBe(sent);
  }, 30_000);
});

describe('cartesia: an overload error for a context on the open socket', () => {
  it('is retried within the bound, and the utterance is spoken whole', async () => {
    const fake = new CartesiaFake();
    const channel = await channelOn(
      fake,
      (baseUrl, apiKey) => new CartesiaEngine({ baseUrl, apiKey }),
    );
    fake.overloadedGenerations = 2;
    const chunks = await collect(
      channel.speak('Hello there, friend.', new AbortController().signal),
    );
    expect(fake.overloadedSent).toBe(2);
    expect(heard(chunks)).toBe(true);
    expect(words(chunks).join(' ')).toContain('friend');
    expect(fake.generations.map((g) => g.transcript)).toEqual(['Hello there, friend.']);
  }, 30_000);

  it('past the bound fails the utterance with the provider status, with nothing heard', async () => {
    const fake = new CartesiaFake();
    const channel = await channelOn(
      fake,
      (baseUrl, apiKey) => new CartesiaEngine({ baseUrl, apiKey }),
    );
    fake.overloadedGenerations = 100;
    const got: SpeechChunk[] = [];
    const err = await (async () => {
      for await (const c of channel.speak('Not now.', new AbortController().signal)) got.push(c);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TtsProviderError);
    expect((err as TtsProviderError).status).toBe(503);
    expect(fake.overloadedSent).toBe(4);
    expect(got).toEqual([]);
  }, 30_000);

  it('a refusal of the request itself is not retried', async () => {
    const fake = new CartesiaFake();
    const channel = await channelOn(
      fake,
      (baseUrl, apiKey) => new CartesiaEngine({ baseUrl, apiKey }),
    );
    fake.overloadedGenerations = 100;
    fake.overloadStatus = 400;
    const err = await collect(channel.speak('Not now.', new AbortController().signal)).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TtsProviderError);
    expect((err as TtsProviderError).status).toBe(400);
    expect(fake.overloadedSent).toBe(1);
  }, 30_000);
});
