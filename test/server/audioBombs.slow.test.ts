// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { encodeWav } from '../../src/media/audio/index.js';
import { startTestServer, type TestServer } from './testServer.js';
import { multipartClip, sineWav } from './wav.js';

/**
 * Issue 9, items 9 and 12: hostile audio is refused with a clean 4xx while the server keeps
 * answering (no request may stall /healthz for more than a second), and a voice needs speech.
 */
const fixture = (name: string) => new Uint8Array(readFileSync(`test/fixtures/audio/${name}`));

/** A WAV header declaring `channels`, `rate` and `dataBytes`, followed by `present` bytes. */
function hostileWav(channels: number, rate: number, dataBytes: number, present: number) {
  const bytes = new Uint8Array(44 + present);
  const view = new DataView(bytes.buffer);
  const text = (offset: number, s: string) => {
    for (let i = 0; i < s.length; i++) bytes[offset + i] = s.charCodeAt(i);
  };
  text(0, 'RIFF');
  view.setUint32(4, 36 + dataBytes, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, channels, true);
  view.setUint32(24, rate, true);
  view.setUint32(28, (rate * channels * 2) >>> 0, true);
  view.setUint16(32, (channels * 2) & 0xffff, true);
  view.setUint16(34, 16, true);
  text(36, 'data');
  view.setUint32(40, dataBytes >>> 0, true);
  for (let i = 44; i < bytes.length; i++) bytes[i] = (i * 7919) & 0xff;
  return bytes;
}

let seed = 99;
const random = (n: number) =>
  Uint8Array.from({ length: n }, () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed >> 16;
  });

/** An Ogg page whose identification packet declares `channels` (Opus) with garbage after it. */
function oggOpus(channels: number) {
  const bytes = random(38 * 1024);
  bytes.set([0x4f, 0x67, 0x67, 0x53], 0); // OggS
  bytes[26] = 1; // one segment
  bytes[27] = 19;
  const head = 28;
  bytes.set(new TextEncoder().encode('OpusHead'), head);
  bytes[head + 8] = 1;
  bytes[head + 9] = channels;
  return bytes;
}

/**
 * `playable`: what is really there is a short valid signal (the header lies about its size), so
 * `/audio` may play it (202); as a reference clip it is too short (4xx).
 */
const BOMBS: Record<string, { bytes: Uint8Array; type: string; playable?: boolean }> = {
  'WAV declaring 65,535 channels (38 KB)': {
    bytes: hostileWav(65_535, 44_100, 38 * 1024, 38 * 1024),
    type: 'audio/wav',
  },
  'WAV declaring a 4 GB data chunk': {
    bytes: hostileWav(2, 48_000, 0xfffffff0, 38 * 1024),
    type: 'audio/wav',
    playable: true,
  },
  'WAV declaring 1 Hz': { bytes: hostileWav(1, 1, 38 * 1024, 38 * 1024), type: 'audio/wav' },
  'WAV declaring 4 GHz': {
    bytes: hostileWav(1, 0xffffffff, 38 * 1024, 38 * 1024),
    type: 'audio/wav',
  },
  'MP3 garbage after a frame sync': {
    bytes: (() => {
      const bytes = random(200 * 1024);
      bytes.set([0xff, 0xfb, 0x90, 0x64], 0);
      return bytes;
    })(),
    type: 'audio/mpeg',
  },
  'Ogg Opus declaring 255 channels': { bytes: oggOpus(255), type: 'audio/ogg' },
  'Ogg garbage': { bytes: oggOpus(2), type: 'audio/ogg' },
  'FLAC of 10 minutes of silence (expands 200x)': {
    bytes: fixture('silence-10min.flac'),
    type: 'audio/flac',
  },
};

let server: TestServer;
let sessionId: string;

beforeAll(async () => {
  server = await startTestServer({ cap: 10 });
  const res = await server.call('POST', '/v1/sessions', {
    json: { avatar_id: AVATAR_CATALOGUE[0]!.avatarId, mode: 'video' },
  });
  sessionId = ((await res.json()) as { session_id: string }).session_id;
});
afterAll(() => server?.close());

/** Polls /healthz every 50 ms until `work` settles; returns each answer's latency. */
async function whilePollingHealth<T>(work: Promise<T>) {
  const latencies: number[] = [];
  let done = false;
  const settled = work.finally(() => (done = true));
  const poller = (async () => {
    while (!done) {
      const started = performance.now();
      const res = await fetch(`${server.url}/healthz`);
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      latencies.push(performance.now() - started);
      await sleep(50);
    }
  })();
  const result = await settled;
  await poller;
  return { result, latencies };
}

async function expectClean4xx(res: Response, what: string) {
  expect(res.status, what).toBeGreaterThanOrEqual(400);
  expect(res.status, what).toBeLessThan(500);
  const body = (await res.json()) as { error: { code: string } };
  expect(['unsupported_audio', 'unreadable_audio', 'clip_too_long', 'clip_too_short']).toContain(
    body.error.code,
  );
}

describe('hostile audio', () => {
  for (const [name, bomb] of Object.entries(BOMBS)) {
    it(`refuses ${name} with a clean 4xx while /healthz answers within 1 s`, async () => {
      const { result, latencies } = await whilePollingHealth(
        Promise.all([
          server.call('POST', '/v1/files', {
            body: multipartClip(bomb.bytes, 'bomb', bomb.type),
          }),
          server.call('POST', `/v1/sessions/${sessionId}/audio`, {
            body: bomb.bytes as Uint8Array<ArrayBuffer>,
            headers: { 'content-type': bomb.type },
          }),
        ]),
      );
      await expectClean4xx(result[0], `${name} as a file`);
      if (bomb.playable && result[1].status === 202) await result[1].arrayBuffer();
      else await expectClean4xx(result[1], `${name} as /audio`);
      expect(latencies.length).toBeGreaterThan(0);
      expect(Math.max(...latencies), `${name}: /healthz latencies`).toBeLessThan(1000);
    }, 60_000);
  }

  it('still decodes normal uploads after the bombs', async () => {
    const res = await server.call('POST', '/v1/files', {
      body: multipartClip(fixture('speech.mp3'), 'speech.mp3', 'audio/mpeg'),
    });
    expect(res.status).toBe(201);
  });
});

describe('voices need speech', () => {
  async function voiceFrom(bytes: Uint8Array) {
    const up = await server.call('POST', '/v1/files', { body: multipartClip(bytes) });
    expect(up.status).toBe(201);
    const { file_id } = (await up.json()) as { file_id: string };
    return server.call('POST', '/v1/voices', { json: { name: 'Probe', file_id } });
  }

  it('answers 422 no_speech for silence, a pure tone and a melody', async () => {
    const rate = 16_000;
    const silence = encodeWav(new Int16Array(5 * rate), rate);
    const melody = new Int16Array(8 * rate);
    for (let i = 0; i < melody.length; i++) {
      const t = i / rate;
      const f = [261.6, 329.6, 392, 523.3][Math.floor(t * 2) % 4]!;
      const env = Math.exp(-3 * ((t * 2) % 1));
      melody[i] = Math.round(
        8000 * env * (Math.sin(2 * Math.PI * f * t) + 0.5 * Math.sin(4 * Math.PI * f * t)),
      );
    }
    for (const [name, clip] of [
      ['silence', silence],
      ['sine', sineWav(5)],
      ['melody', encodeWav(melody, rate)],
    ] as const) {
      const res = await voiceFrom(clip);
      const body = (await res.json()) as { error: { code: string; type: string } };
      expect({ name, status: res.status, ...body.error }).toMatchObject({
        name,
        status: 422,
        type: 'invalid_request',
        code: 'no_speech',
      });
    }
  }, 120_000);

  it('creates a voice from speech', async () => {
    const res = await voiceFrom(fixture('voice-flite-slt-female.mp3'));
    expect(res.status).toBe(201);
  }, 120_000);
});
