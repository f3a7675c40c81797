// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../../src/media/avatarCatalogue.js';
import { TtsEngines } from '../../../src/media/tts/index.js';
import { CartesiaFake } from '../../fakes/cartesiaFake.js';
import { ElevenLabsFake } from '../../fakes/elevenLabsFake.js';
import { describeWebRtc } from '../../support/network.js';
import { multipartClip } from '../../server/wav.js';
import { rms } from './avatarClient.js';
import { startMediaStack, type MediaStack } from './mediaStack.js';

const AVATAR = AVATAR_CATALOGUE[0]!;
const clip = () =>
  new Uint8Array(
    readFileSync(new URL('../../fixtures/audio/voice-flite-rms-male.ogg', import.meta.url)),
  );

const ENGINES = [
  {
    engine: 'cartesia',
    fake: () => new CartesiaFake(),
    options: (url: string, key: string) => ({ cartesia: { apiKey: key, baseUrl: url } }),
  },
  {
    engine: 'elevenlabs',
    fake: () => new ElevenLabsFake(),
    options: (url: string, key: string) => ({ elevenlabs: { apiKey: key, baseUrl: url } }),
  },
] as const;

describeWebRtc('cloned voices through a provider, end to end over WebRTC', (address) => {
  describe.each(ENGINES)('$engine', ({ engine, fake: makeFake, options }) => {
    let fake: CartesiaFake | ElevenLabsFake;
    let stack: MediaStack;
    let voiceId: string;

    beforeAll(async () => {
      fake = makeFake();
      const url = await fake.listen();
      // Real time: 100 ms chunks every 100 ms, after the provider's own 150 ms.
      fake.behaviour.chunkIntervalMs = 100;
      fake.behaviour.firstChunkDelayMs = 150;
      stack = await startMediaStack(address, {
        tts: new TtsEngines({ defaultEngine: engine, ...options(url, fake.apiKey) }),
      });
      const up = await stack.visage.call('POST', '/v1/files', {
        body: multipartClip(clip(), 'me.ogg', 'audio/ogg'),
      });
      const { file_id } = (await up.json()) as { file_id: string };
      const res = await stack.visage.call('POST', '/v1/voices', {
        json: { name: 'Me', file_id },
      });
      const voice = (await res.json()) as { voice_id: string; engine: string };
      expect(voice.engine).toBe(engine);
      voiceId = voice.voice_id;
    }, 180_000);

    afterAll(async () => {
      await stack?.close();
      await fake?.close();
    });

    const speak = async (id: string, text: string) => {
      const res = await stack.visage.call('POST', `/v1/sessions/${id}/speak`, { json: { text } });
      expect(res.status).toBe(202);
      return ((await res.json()) as { utterance_id: string }).utterance_id;
    };

    it('speaks in the cloned voice, the mouth moving with it and the text on lk.chat', async () => {
      const { session_id, client } = await stack.session(AVATAR.avatarId, { voice_id: voiceId });
      await client.waitFor(() => client.video.length > 5, 10_000, 'video');
      const text = 'Hello there. This voice comes from the provider, cloned from my clip.';
      const id = await speak(session_id, text);
      await client.waitFor(
        () => client.finals().some((m) => m.utterance_id === id),
        30_000,
        'final',
      );
      const g = fake.generations.at(-1)!;
      expect(g.done).toBe(true);
      const mine = client.chat.filter((m) => m.utterance_id === id);
      expect(mine.at(-1)).toMatchObject({ final: true, text });
      // Interims grow word by word as the provider's word timings are heard.
      const interims = mine.filter((m) => !m.final && m.text !== '');
      expect(interims.length).toBeGreaterThan(4);
      for (let i = 1; i < interims.length; i++) {
        expect(interims[i]!.text.startsWith(interims[i - 1]!.text)).toBe(true);
      }
      const startMs = mine[0]!.atMs;
      const endMs = mine.at(-1)!.atMs;
      expect(rms(client.audioBetween(startMs, endMs))).toBeGreaterThan(500);
      const talking = client.framesBetween(startMs + 200, endMs - 200).map((f) => f.mouth);
      await sleep(800);
      const after = client.framesBetween(endMs + 400, client.now()).map((f) => f.mouth);
      expect(Math.max(...talking)).toBeGreaterThan(Math.max(...after) + 0.02);
      expect(new Set(talking.map((m) => m.toFixed(3))).size).toBeGreaterThan(5);
      await stack.visage.call('DELETE', `/v1/sessions/${session_id}`);
    }, 120_000);

    it("moves the mouth with the voice even where the provider's timings come late", async () => {
      const { session_id, client } = await stack.session(AVATAR.avatarId, { voice_id: voiceId });
      await client.waitFor(() => client.video.length > 5, 10_000, 'video');
      const LAG_MS = 1_500;
      fake.behaviour.timingsLagMs = LAG_MS;
      try {
        // Long enough that the lagged timings still fall inside the audio in the late window.
        const text =
          'Listen to this sentence, which goes on for a good few seconds of speech, long ' +
          'after its timings have begun to arrive, so that both halves can be compared.';
        const id = await speak(session_id, text);
        await client.waitFor(
          () => client.finals().some((m) => m.utterance_id === id),
          30_000,
          'final',
        );
        const startMs = client.chat.find((m) => m.utterance_id === id)!.atMs;
        // The voice is loud from the start, but the provider's timings say nothing is spoken
        // before LAG_MS: the mouth follows the sound (lipsync/speechMouth.ts), so it moves there
        // all the same; the timings only add the lip closures (m, b, p, f, v) where they say.
        expect(rms(client.audioBetween(startMs + 100, startMs + LAG_MS - 300))).toBeGreaterThan(
          500,
        );
        const early = client
          .framesBetween(startMs + 200, startMs + LAG_MS - 300)
          .map((f) => f.mouth);
        const late = client
          .framesBetween(startMs + LAG_MS + 300, startMs + LAG_MS + 3_000)
          .map((f) => f.mouth);
        expect(early.length).toBeGreaterThan(5);
        const range = (m: number[]) => Math.max(...m) - Math.min(...m);
        expect(range(early)).toBeGreaterThan(0.04);
        expect(range(late)).toBeGreaterThan(0.04);
      } finally {
        fake.behaviour.timingsLagMs = 0;
        await stack.visage.call('DELETE', `/v1/sessions/${session_id}`);
      }
    }, 120_000);

    it('an interrupt cancels the provider stream, the audio stops and the final has what was heard', async () => {
      const { session_id, client } = await stack.session(AVATAR.avatarId, { voice_id: voiceId });
      const long =
        'This is a long answer that keeps going for a while, so that there is time to interrupt it in the middle, long before it would end by itself.';
      const id = await speak(session_id, long);
      await client.waitFor(
        () => client.chat.some((m) => m.utterance_id === id && m.text.split(' ').length >= 4),
        30_000,
        'a few words',
      );
      const res = await stack.visage.call('POST', `/v1/sessions/${session_id}/interrupt`);
      const cutAt = client.now();
      expect(await res.json()).toMatchObject({ interrupted: true });
      const g = fake.generations.at(-1)!;
      await client.waitFor(() => g.cancelled, 5_000, 'the provider to see the cancel');
      expect(g.done).toBe(false);
      await client.waitFor(
        () => client.finals().some((m) => m.utterance_id === id),
        5_000,
        'final after interrupt',
      );
      const final = client.finals().find((m) => m.utterance_id === id)!;
      expect(long.startsWith(final.text)).toBe(true);
      expect(final.text.length).toBeGreaterThan(5);
      expect(final.text.length).toBeLessThan(long.length - 20);
      await sleep(1_500);
      expect(rms(client.audioBetween(cutAt + 500, client.now()))).toBeLessThan(100);

      // A provider failure mid-utterance ends that utterance with what was heard; the session
      // keeps working.
      fake.behaviour.dropAfterChunks = 12;
      const broken = await speak(session_id, long);
      await client.waitFor(
        () => client.finals().some((m) => m.utterance_id === broken),
        30_000,
        'final of the failed utterance',
      );
      fake.behaviour.dropAfterChunks = null;
      const partial = client.finals().find((m) => m.utterance_id === broken)!;
      expect(long.startsWith(partial.text)).toBe(true);
      expect(partial.text.length).toBeLessThan(long.length - 20);
      const again = await speak(session_id, 'Still here.');
      await client.waitFor(
        () => client.finals().some((m) => m.utterance_id === again && m.text === 'Still here.'),
        30_000,
        'the session speaking again',
      );
      await stack.visage.call('DELETE', `/v1/sessions/${session_id}`);
    }, 180_000);
  });
});
