// SPDX-License-Identifier: GPL-3.0-or-later
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  VisageApiError,
  VisageAuthenticationError,
  VisageClient,
  VisageConflictError,
  VisageConnectionError,
  VisageNotFoundError,
  VisageRateLimitError,
} from '@visage-avatar/client';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { startTestServer, type TestServer } from '../server/testServer.js';
import { astronaut } from '../support/portraits.js';

const AVATAR = AVATAR_CATALOGUE[1]!.avatarId;
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

// The file's three suites run side by side: two of them mostly wait (a Retry-After of 10 s, the
// 5 s fallback), and the requests of each go to its own key or its own peer. Within a suite the
// tests run in order (`it.sequential`), as they share that key or peer.
describe.concurrent('VisageClient against the real server', () => {
  it.sequential(
    'covers every endpoint with typed results and concurrency figures',
    async ({ expect }) => {
      const client = new VisageClient({ apiKey: server.secret, baseUrl: server.url });
      expect((await client.health()).status).toBe('ok');
      expect((await client.avatars.list()).data.length).toBe(AVATAR_CATALOGUE.length);
      const file = await client.files.upload(
        readFileSync('test/fixtures/audio/speech.mp3'),
        'a.mp3',
      );
      expect(file.content_type).toBe('audio/mpeg');
      const voice = await client.voices.create({ name: 'Client voice', file_id: file.file_id });
      expect(voice.status).toBe('ready');
      expect((await client.voices.list({ limit: 1 })).data[0]!.voice_id).toBe(voice.voice_id);

      const session = await client.sessions.create({
        avatar_id: AVATAR,
        mode: 'video',
        voice_id: voice.voice_id,
      });
      expect(session.concurrency).toEqual({ active: 1, max: 3 });
      expect(session.participant_token!.length).toBeGreaterThan(20);
      expect((await client.sessions.get(session.session_id)).voice_id).toBe(voice.voice_id);
      expect((await client.sessions.list({ status: 'active' })).data[0]!.session_id).toBe(
        session.session_id,
      );
      const spoken = await client.sessions.speak(session.session_id, 'Hello from the client.');
      expect(spoken.utterance_id).toMatch(/^utt_/);
      expect(spoken.concurrency.max).toBe(3);
      const played = await client.sessions.audio(
        session.session_id,
        {
          bytes: readFileSync('test/fixtures/audio/speech-stereo-8k.wav'),
          contentType: 'audio/wav',
        },
        { text: 'a transcript' },
      );
      expect(played.status).toBe('queued');
      expect(
        (await client.sessions.audio(session.session_id, { file_id: file.file_id })).status,
      ).toBe('queued');
      expect((await client.sessions.interrupt(session.session_id)).interrupted).toBe(false);
      expect((await client.sessions.setWaiting(session.session_id, true)).status).toBe('waiting');
      await expect(client.sessions.speak(session.session_id, 'parked')).rejects.toBeInstanceOf(
        VisageConflictError,
      );
      expect((await client.sessions.setWaiting(session.session_id, false)).status).toBe('active');
      expect(
        (await client.sessions.participantToken(session.session_id)).participant_token,
      ).toBeTruthy();
      const deleted = await client.sessions.delete(session.session_id);
      expect(deleted.concurrency.active).toBe(0);
      await client.sessions.delete(session.session_id); // idempotent
    },
    90_000,
  ); // creating a voice loads the speech detector (WebAssembly) the first time

  it.sequential(
    'makes, lists, previews and deletes a photo avatar',
    async ({ expect }) => {
      const client = new VisageClient({ apiKey: server.secret, baseUrl: server.url });
      const avatar = await client.avatars.create({ name: 'Eileen', image: astronaut() });
      expect(avatar).toMatchObject({ name: 'Eileen', source: 'photo', status: 'ready' });
      expect(await client.avatars.get(avatar.avatar_id)).toEqual(avatar);
      expect((await client.avatars.list({ limit: 1 })).data).toEqual([avatar]);
      const png = await client.avatars.preview(avatar.avatar_id);
      expect([...png.subarray(1, 4)].map((c) => String.fromCharCode(c)).join('')).toBe('PNG');
      const session = await client.sessions.create({ avatar_id: avatar.avatar_id, mode: 'video' });
      await client.sessions.delete(session.session_id);
      await client.avatars.delete(avatar.avatar_id);
      await client.avatars.delete(avatar.avatar_id); // idempotent
      await expect(client.avatars.get(avatar.avatar_id)).rejects.toMatchObject({
        code: 'avatar_not_found',
      });
      await expect(
        client.avatars.create({ name: 'x', image: new TextEncoder().encode('no picture') }),
      ).rejects.toMatchObject({ status: 415, code: 'unsupported_image' });
    },
    60_000,
  );

  it.sequential(
    'gets, lists and deletes files and voices; another key sees none of them',
    async ({ expect }) => {
      const client = new VisageClient({ apiKey: server.secret, baseUrl: server.url });
      const file = await client.files.upload(
        readFileSync('test/fixtures/audio/speech.mp3'),
        'b.mp3',
      );
      expect(await client.files.get(file.file_id)).toEqual(file);
      expect((await client.files.list({ limit: 1 })).data).toEqual([file]);
      const voice = await client.voices.create({ name: 'Kept', file_id: file.file_id });
      expect(await client.voices.get(voice.voice_id)).toEqual(voice);

      const other = new VisageClient({
        apiKey: (await server.newKey()).secret,
        baseUrl: server.url,
      });
      await expect(other.files.get(file.file_id)).rejects.toMatchObject({ code: 'file_not_found' });
      await expect(other.voices.get(voice.voice_id)).rejects.toBeInstanceOf(VisageNotFoundError);
      await expect(other.files.delete(file.file_id)).rejects.toBeInstanceOf(VisageNotFoundError);
      await expect(other.voices.delete(voice.voice_id)).rejects.toMatchObject({
        status: 404,
        code: 'voice_not_found',
      });

      await client.files.delete(file.file_id);
      await client.files.delete(file.file_id); // idempotent
      await expect(client.files.get(file.file_id)).rejects.toBeInstanceOf(VisageNotFoundError);
      expect((await client.voices.get(voice.voice_id)).voice_id).toBe(voice.voice_id);
      await client.voices.delete(voice.voice_id);
      await client.voices.delete(voice.voice_id); // idempotent
      await expect(client.voices.get(voice.voice_id)).rejects.toMatchObject({
        code: 'voice_not_found',
      });
    },
  );

  it.sequential('throws typed errors carrying the envelope and request id', async ({ expect }) => {
    const client = new VisageClient({ apiKey: server.secret, baseUrl: server.url });
    const missing = await client.sessions
      .get('ses_000000000000000000000000')
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(VisageNotFoundError);
    expect(missing).toMatchObject({ status: 404, code: 'session_not_found', type: 'not_found' });
    expect((missing as VisageNotFoundError).requestId).toMatch(/^req_/);
    const bad = new VisageClient({ apiKey: 'sk_wrongwrongwrongwrong', baseUrl: server.url });
    await expect(bad.avatars.list()).rejects.toBeInstanceOf(VisageAuthenticationError);
    const invalid = await client.voices.create({ name: 'x' }).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ status: 400, code: 'invalid_voice_source' });
  });

  it.sequential('takes a per-call retry budget over the client default', async ({ expect }) => {
    const k = await server.newKey(1);
    const client = new VisageClient({ apiKey: k.secret, baseUrl: server.url, maxRetries: 5 });
    const first = await client.sessions.create({ avatar_id: AVATAR, mode: 'video' });
    const started = performance.now();
    await expect(
      client.sessions.create({ avatar_id: AVATAR, mode: 'video' }, { maxRetries: 0 }),
    ).rejects.toBeInstanceOf(VisageRateLimitError);
    expect(performance.now() - started).toBeLessThan(5_000);
    await client.sessions.delete(first.session_id);
  });

  it.sequential(
    'raises VisageRateLimitError with the cap once retries are spent',
    async ({ expect }) => {
      const k = await server.newKey(1);
      const client = new VisageClient({ apiKey: k.secret, baseUrl: server.url, maxRetries: 0 });
      const first = await client.sessions.create({ avatar_id: AVATAR, mode: 'video' });
      const err = (await client.sessions
        .create({ avatar_id: AVATAR, mode: 'video' })
        .catch((e: unknown) => e)) as VisageRateLimitError;
      expect(err).toBeInstanceOf(VisageRateLimitError);
      expect(err).toMatchObject({
        code: 'concurrency_cap',
        retryAfterSeconds: 10,
        concurrency: { active: 1, max: 1 },
      });
      await client.sessions.delete(first.session_id);
    },
  );

  it.sequential('honours an abort signal while waiting to retry', async ({ expect }) => {
    const k = await server.newKey(1);
    const client = new VisageClient({ apiKey: k.secret, baseUrl: server.url, maxRetries: 3 });
    const first = await client.sessions.create({ avatar_id: AVATAR, mode: 'video' });
    const started = performance.now();
    const signal = AbortSignal.timeout(300);
    await expect(
      client.sessions.create({ avatar_id: AVATAR, mode: 'video' }, { signal }),
    ).rejects.toBeTruthy();
    expect(performance.now() - started).toBeLessThan(5_000);
    await client.sessions.delete(first.session_id);
  });
});

describe.concurrent('VisageClient waiting out the concurrency cap', () => {
  it('retries a 429 concurrency_cap after Retry-After (10 s) and succeeds once a slot frees', async ({
    expect,
  }) => {
    const k = await server.newKey(1);
    const client = new VisageClient({ apiKey: k.secret, baseUrl: server.url, maxRetries: 1 });
    const first = await client.sessions.create({ avatar_id: AVATAR, mode: 'video' });
    setTimeout(() => void client.sessions.delete(first.session_id), 1_000);
    const started = performance.now();
    const second = await client.sessions.create({ avatar_id: AVATAR, mode: 'video' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(9_900);
    expect(second.concurrency).toEqual({ active: 1, max: 1 });
    await client.sessions.delete(second.session_id);
  }, 30_000);
});

describe.concurrent('VisageClient edge behaviour (a scripted HTTP peer)', () => {
  let peer: Server;
  let url: string;
  const hits: number[] = [];

  beforeAll(async () => {
    peer = createServer((req, res) => {
      hits.push(performance.now());
      if (req.url === '/v1/sessions' && hits.length === 1) {
        // 429 without Retry-After: the client must fall back to 5 s.
        res.writeHead(429, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: {
              type: 'rate_limit',
              code: 'platform_busy',
              message: 'busy',
              request_id: 'req_x',
            },
          }),
        );
      } else if (req.method === 'DELETE') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('OK');
      } else if (req.url?.startsWith('/moved')) {
        res.writeHead(301, { location: `${url}/elsewhere/v1/avatars` });
        res.end();
      } else if (req.url?.startsWith('/slow')) {
        setTimeout(() => res.end('{}'), 2_000);
      } else {
        res.writeHead(201, {
          'content-type': 'application/json',
          'x-service-concurrent-sessions': '1',
          'x-service-max-concurrent-sessions': '3',
        });
        res.end(JSON.stringify({ session_id: 'ses_x' }));
      }
    });
    await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(peer.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => peer.close(r)));

  it.sequential(
    'waits 5 s when a 429 has no Retry-After',
    async ({ expect }) => {
      const client = new VisageClient({ apiKey: 'sk_test', baseUrl: url });
      const created = await client.sessions.create({ avatar_id: AVATAR, mode: 'video' });
      expect(created.session_id).toBe('ses_x');
      expect(hits[1]! - hits[0]!).toBeGreaterThanOrEqual(4_900);
    },
    20_000,
  );

  it.sequential(
    'tolerates a non-JSON DELETE body and reports timeouts and refused connections',
    async ({ expect }) => {
      const client = new VisageClient({ apiKey: 'sk_test', baseUrl: url, timeoutMs: 300 });
      await expect(client.sessions.delete('ses_x')).resolves.toBeTruthy();
      const slow = new VisageClient({ apiKey: 'sk_test', baseUrl: `${url}/slow`, timeoutMs: 200 });
      await expect(slow.health()).rejects.toBeInstanceOf(VisageConnectionError);
      const refused = new VisageClient({ apiKey: 'sk_test', baseUrl: 'http://127.0.0.1:1' });
      await expect(refused.health()).rejects.toBeInstanceOf(VisageConnectionError);
    },
  );

  it.sequential('does not follow a redirect, and says where it pointed', async ({ expect }) => {
    const moved = new VisageClient({ apiKey: 'sk_test', baseUrl: `${url}/moved` });
    const before = hits.length;
    const error = await moved.avatars.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VisageApiError);
    expect((error as VisageApiError).status).toBe(301);
    expect((error as VisageApiError).message).toContain(`${url}/elsewhere/v1/avatars`);
    expect(hits.length - before).toBe(1); // the key went nowhere else
  });

  it.sequential('refuses to start without a secret key', ({ expect }) => {
    const saved = process.env.VISAGE_API_KEY;
    delete process.env.VISAGE_API_KEY;
    expect(() => new VisageClient({ baseUrl: url })).toThrow(/apiKey/);
    expect(() => new VisageClient({ apiKey: 'pk_x' })).toThrow(/sk_/);
    if (saved) process.env.VISAGE_API_KEY = saved;
  });
});
