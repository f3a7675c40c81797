// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MediaCore, MediaSession } from '../../src/media/mediaCore.js';
import { startTestServer, type TestServer } from './testServer.js';
import { multipartClip } from './wav.js';

/**
 * The session manager's ordering guarantee, observed at the media seam: a recording media core
 * notes the order in which driving calls reach the session.
 */
const calls: string[] = [];
const recordingMedia: MediaCore = {
  kind: 'recording',
  async start(): Promise<MediaSession> {
    return {
      speaking: false,
      speak: (item) => calls.push(`speak:${item.text}`),
      playAudio: (item) => calls.push(`audio:${item.text}`),
      interrupt: () => {
        calls.push('interrupt');
        return { interrupted: false, droppedUtterances: 0 };
      },
      setWaiting: (w) => calls.push(`waiting:${w}`),
      close: async () => void calls.push('close'),
    };
  },
  running: () => new Map(),
  async close() {},
};

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ start: { media: recordingMedia } });
});
afterAll(() => server?.close());

describe('driving calls on one session', () => {
  it('reach the media in arrival order, even when an earlier one is slow to decode', async () => {
    const res = await server.call('POST', '/v1/sessions', {
      json: { avatar_id: 'avt_Milo00000000000000000001', mode: 'video' },
    });
    const { session_id: id } = (await res.json()) as { session_id: string };
    // ~57 s of MP3: decoding it takes a couple of hundred milliseconds, inside the session queue.
    const mp3 = readFileSync('test/fixtures/audio/speech.mp3');
    const long = new Uint8Array(Buffer.concat(Array.from({ length: 17 }, () => mp3)));
    const up = await server.call('POST', '/v1/files', { body: multipartClip(long, 'long.mp3') });
    const { file_id } = (await up.json()) as { file_id: string };
    calls.length = 0;
    const audio = server.call('POST', `/v1/sessions/${id}/audio?text=first`, { json: { file_id } });
    await sleep(30);
    const interrupt = server.call('POST', `/v1/sessions/${id}/interrupt`);
    const speak = server.call('POST', `/v1/sessions/${id}/speak`, { json: { text: 'after' } });
    expect((await audio).status).toBe(202);
    expect((await interrupt).status).toBe(200);
    expect((await speak).status).toBe(202);
    expect(calls).toEqual(['audio:first', 'interrupt', 'speak:after']);
    await server.call('DELETE', `/v1/sessions/${id}`);
    expect(calls.at(-1)).toBe('close');
  });
});
