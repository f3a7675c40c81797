// SPDX-License-Identifier: GPL-3.0-or-later
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import type { MediaSessionSpec } from '../../src/media/mediaCore.js';
import { LiveKitMediaCore } from '../../src/media/room/index.js';
import { stopEspeakThread, TtsEngines } from '../../src/media/tts/index.js';
import { CartesiaFake } from '../fakes/cartesiaFake.js';
import { testLogger } from '../support/testLog.js';
import { DetachedMediaCore } from './detachedMedia.js';
import { startTestServer, type TestServer } from './testServer.js';
import { multipartClip } from './wav.js';

const clip = () =>
  new Uint8Array(
    readFileSync(new URL('../fixtures/audio/voice-flite-rms-male.ogg', import.meta.url)),
  );

/** A loopback URL where nothing listens (a fake opened and closed again). */
async function closedPortUrl(): Promise<string> {
  const f = new CartesiaFake();
  const url = await f.listen();
  await f.close();
  return url;
}

interface VoiceList {
  data: { voice_id: string; source: string; engine: string }[];
}

describe('voices made by a cloning provider (VISAGE_TTS_ENGINE=cartesia, against the fake)', () => {
  let fake: CartesiaFake;
  let server: TestServer;
  let fileId: string;
  let baseUrl: string;
  /** Every log line the servers of this suite wrote (the provider key must be in none). */
  const logLines: string[] = [];
  const log = testLogger((line) => logLines.push(JSON.stringify(line)));

  beforeAll(async () => {
    fake = new CartesiaFake();
    baseUrl = await fake.listen();
    server = await startTestServer({
      start: {
        log,
        tts: new TtsEngines({
          defaultEngine: 'cartesia',
          cartesia: { apiKey: fake.apiKey, baseUrl: baseUrl },
        }),
      },
    });
    const up = await server.call('POST', '/v1/files', {
      body: multipartClip(clip(), 'me.ogg', 'audio/ogg'),
    });
    fileId = ((await up.json()) as { file_id: string }).file_id;
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await fake?.close();
    await stopEspeakThread();
  });

  const create = () => server.call('POST', '/v1/voices', { json: { name: 'Me', file_id: fileId } });
  const clones = async () =>
    ((await (await server.call('GET', '/v1/voices?limit=100')).json()) as VoiceList).data.filter(
      (v) => v.source === 'clone',
    );

  it('clones the uploaded clip with the provider and records the engine on the voice', async () => {
    const res = await create();
    expect(res.status).toBe(201);
    const voice = (await res.json()) as { voice_id: string; engine: string };
    expect(voice.engine).toBe('cartesia');
    expect(fake.clones.at(-1)).toMatchObject({ name: 'Me', clipBytes: clip().length });
    const listed = await clones();
    expect(listed.find((v) => v.voice_id === voice.voice_id)?.engine).toBe('cartesia');
    const all = ((await (await server.call('GET', '/v1/voices?limit=100')).json()) as VoiceList)
      .data;
    expect(all.filter((v) => v.source === 'stock').every((v) => v.engine === 'espeak')).toBe(true);
  }, 90_000);

  it('answers 502 tts_provider_error with the reason when the provider refuses; nothing stored', async () => {
    const before = (await clones()).length;
    fake.fail(401);
    const res = await create();
    fake.heal();
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { type: string; code: string; message: string } };
    expect(body.error).toMatchObject({ type: 'api_error', code: 'tts_provider_error' });
    expect(body.error.message).toContain('Invalid API key');
    expect(body.error.message).not.toContain(fake.apiKey);
    expect((await clones()).length).toBe(before);
  }, 90_000);

  it('answers 503 tts_provider_unavailable when the provider cannot be reached', async () => {
    const before = (await clones()).length;
    const down = await startTestServer({
      start: {
        tts: new TtsEngines({
          defaultEngine: 'cartesia',
          cartesia: { apiKey: fake.apiKey, baseUrl: await closedPortUrl() },
        }),
      },
    });
    try {
      const up = await down.call('POST', '/v1/files', {
        body: multipartClip(clip(), 'me.ogg', 'audio/ogg'),
      });
      const { file_id } = (await up.json()) as { file_id: string };
      const res = await down.call('POST', '/v1/voices', { json: { name: 'Me', file_id } });
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
        'tts_provider_unavailable',
      );
    } finally {
      await down.close();
    }
    expect((await clones()).length).toBe(before);
  }, 90_000);

  it('a voice keeps speaking with the engine that made it when the default changes', async () => {
    const res = await create();
    const voice = (await res.json()) as { voice_id: string };
    const specs: MediaSessionSpec[] = [];
    // The same data served again with espeak as the default engine (the Cartesia key still set).
    const auth = server.secret;
    await server.close();
    server = await startTestServer({
      dataDir: server.dataDir,
      start: {
        log,
        tts: new TtsEngines({ cartesia: { apiKey: fake.apiKey, baseUrl } }),
        media: new DetachedMediaCore({ beforeStart: async (spec) => void specs.push(spec) }),
      },
    });
    const listed = (await (
      await server.call('GET', '/v1/voices?limit=100', { auth })
    ).json()) as VoiceList;
    expect(listed.data.find((v) => v.voice_id === voice.voice_id)?.engine).toBe('cartesia');
    const made = await server.call('POST', '/v1/voices', {
      json: { name: 'New', file_id: fileId },
      auth,
    });
    expect(((await made.json()) as { engine: string }).engine).toBe('espeak');
    const session = await server.call('POST', '/v1/sessions', {
      auth,
      json: { avatar_id: 'avt_Ada000000000000000000001', mode: 'video', voice_id: voice.voice_id },
    });
    expect(session.status).toBe(201);
    expect(specs.at(-1)).toMatchObject({ voiceId: voice.voice_id, voiceEngine: 'cartesia' });
  }, 60_000);

  it('never writes the provider key into a log line', () => {
    expect(logLines.length).toBeGreaterThan(10);
    expect(logLines.filter((line) => line.includes(fake.apiKey))).toEqual([]);
  });

  it('fails loudly at start when the key is missing or refused', async () => {
    const log = pino({ level: 'silent' });
    await expect(
      LiveKitMediaCore.create({ log, tts: new TtsEngines({ defaultEngine: 'elevenlabs' }) }),
    ).rejects.toThrow('no API key was given');
    const fakeUrl = await closedPortUrl();
    const refused = (await LiveKitMediaCore.create({
      log,
      tts: new TtsEngines({
        defaultEngine: 'cartesia',
        cartesia: { apiKey: 'wrong-key', baseUrl: baseUrl },
      }),
    }).catch((e: unknown) => e)) as Error;
    expect(refused.message).toBe(
      'TTS engine "cartesia" (the default engine) failed its key check: cartesia answered 401: Invalid API key',
    );
    await expect(
      LiveKitMediaCore.create({
        log,
        tts: new TtsEngines({
          defaultEngine: 'cartesia',
          cartesia: { apiKey: 'k', baseUrl: fakeUrl },
        }),
      }),
    ).rejects.toThrow(/failed its key check: cartesia is unreachable/);
  }, 30_000);
});
