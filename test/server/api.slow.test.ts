// SPDX-License-Identifier: GPL-3.0-or-later
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { keyAdmin } from '../../src/server/admin/keyAdmin.js';
import { startTestServer, unknownSecret, unknownSessionId, type TestServer } from './testServer.js';
import { multipartClip, sineWav } from './wav.js';

const AVATAR = AVATAR_CATALOGUE[0]!;
const fixture = (name: string) => new Uint8Array(readFileSync(`test/fixtures/audio/${name}`));

async function expectError(res: Response, status: number, code: string, type?: string) {
  const body = (await res.json()) as {
    error: { type: string; code: string; message: string; request_id: string; param?: string };
  };
  expect({ status: res.status, code: body.error.code }).toEqual({ status, code });
  if (type) expect(body.error.type).toBe(type);
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(body.error.request_id).toMatch(/^req_[0-9A-Za-z]{24}$/);
  expect(res.headers.get('x-request-id')).toBe(body.error.request_id);
  return body.error;
}

let server: TestServer;
let clipServer: Server;
let clipBaseUrl: string;

beforeAll(async () => {
  // Its tests make voices (the first would load the speech model inside its own 30 s).
  server = await startTestServer({ limits: { fileBytes: 512 * 1024 }, speechModelLoaded: true });
  // A local "public" clip host for url voices (the server allows it only when told to).
  clipServer = createServer((req, res) => {
    if (req.url === '/clip.mp3') {
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      res.end(fixture('speech.mp3'));
    } else if (req.url === '/redirect') {
      res.writeHead(302, { location: '/clip.mp3' });
      res.end();
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((r) => clipServer.listen(0, '127.0.0.1', r));
  clipBaseUrl = `http://127.0.0.1:${(clipServer.address() as AddressInfo).port}`;
}, 180_000);

afterAll(async () => {
  await server?.close();
  await new Promise((r) => clipServer?.close(r));
});

async function createSession(extra: Record<string, unknown> = {}, auth?: string) {
  const res = await server.call('POST', '/v1/sessions', {
    json: { avatar_id: AVATAR.avatarId, mode: 'video', ...extra },
    auth,
  });
  return { res, body: (await res.clone().json()) as Record<string, unknown> };
}

describe('meta', () => {
  it('serves /healthz and the OpenAPI document without a key', async () => {
    const health = await server.call('GET', '/healthz', { auth: null });
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', media: 'detached' });
    const doc = (await (await server.call('GET', '/v1/openapi.json', { auth: null })).json()) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/v1/files',
        '/v1/voices',
        '/v1/sessions',
        '/v1/sessions/{id}',
        '/v1/sessions/{id}/speak',
        '/v1/sessions/{id}/audio',
        '/v1/sessions/{id}/interrupt',
        '/v1/sessions/{id}/waiting_state',
        '/v1/avatars',
      ]),
    );
    expect(doc.components.schemas).toHaveProperty('Session');
    expect(doc.components.schemas).toHaveProperty('ErrorEnvelope');
  });

  it('answers unknown routes with 404 route_not_found and wrong methods with 405 + Allow', async () => {
    await expectError(await server.call('GET', '/v1/nope'), 404, 'route_not_found', 'not_found');
    const res = await server.call('PUT', '/v1/sessions');
    expect(res.headers.get('allow')).toBe('POST, GET, HEAD');
    await expectError(res, 405, 'method_not_allowed');
  });
});

describe('authentication', () => {
  it('refuses a missing key with 401 missing_api_key and WWW-Authenticate', async () => {
    const res = await server.call('GET', '/v1/avatars', { auth: null });
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    await expectError(res, 401, 'missing_api_key', 'authentication');
  });

  it('refuses garbled and unknown keys with 401 invalid_api_key', async () => {
    const garbled = await server.call('GET', '/v1/avatars', {
      headers: { authorization: 'Basic abc' },
      auth: null,
    });
    await expectError(garbled, 401, 'invalid_api_key');
    await expectError(
      await server.call('GET', '/v1/avatars', { auth: 'not-a-key' }),
      401,
      'invalid_api_key',
    );
    await expectError(
      await server.call('GET', '/v1/avatars', { auth: unknownSecret() }),
      401,
      'invalid_api_key',
    );
  });

  it('stops accepting a revoked key at once', async () => {
    const k = await server.newKey();
    expect((await server.call('GET', '/v1/avatars', { auth: k.secret })).status).toBe(200);
    await keyAdmin.revoke(server.store, k.id);
    await expectError(
      await server.call('GET', '/v1/avatars', { auth: k.secret }),
      401,
      'invalid_api_key',
    );
  });
});

describe('validation', () => {
  it('rejects unknown fields naming the field', async () => {
    const { res } = await createSession({ colour: 'blue' });
    const err = await expectError(res, 400, 'unknown_field', 'invalid_request');
    expect(err.param).toBe('colour');
  });

  it('rejects malformed JSON, non-object JSON and a wrong content type', async () => {
    const bad = await server.call('POST', '/v1/sessions', {
      body: '{"avatar_id":',
      headers: { 'content-type': 'application/json' },
    });
    await expectError(bad, 400, 'invalid_json');
    await expectError(
      await server.call('POST', '/v1/sessions', { json: [1, 2] }),
      400,
      'validation_failed',
    );
    const text = await server.call('POST', '/v1/sessions', {
      body: 'avatar_id=x',
      headers: { 'content-type': 'text/plain' },
    });
    await expectError(text, 415, 'unsupported_media_type');
  });

  it('rejects a bad mode, transport, or missing required field with validation_failed', async () => {
    const mode = await expectError(
      (await createSession({ mode: 'audio' })).res,
      400,
      'validation_failed',
    );
    expect(mode.param).toBe('mode');
    const transport = await expectError(
      (await createSession({ transport: 'webrtc' })).res,
      400,
      'validation_failed',
    );
    expect(transport.param).toBe('transport');
    const missing = await server.call('POST', '/v1/sessions', { json: { mode: 'video' } });
    expect((await expectError(missing, 400, 'validation_failed')).param).toBe('avatar_id');
  });

  it('refuses bodies over the JSON limit with 413', async () => {
    const res = await server.call('POST', '/v1/voices', {
      json: { name: 'x'.repeat(300 * 1024) },
    });
    await expectError(res, 413, 'body_too_large');
  });

  it('rejects bad list queries', async () => {
    await expectError(await server.call('GET', '/v1/sessions?limit=0'), 400, 'validation_failed');
    await expectError(
      await server.call('GET', '/v1/sessions?status=sleeping'),
      400,
      'validation_failed',
    );
    await expectError(await server.call('GET', '/v1/sessions?colour=1'), 400, 'unknown_field');
  });
});

describe('files', () => {
  it('stores decodable audio in every supported format and measures its duration', async () => {
    for (const [name, format, type] of [
      ['speech.mp3', 'mp3', 'audio/mpeg'],
      ['speech-opus.ogg', 'ogg', 'audio/ogg'],
      ['speech.webm', 'webm', 'audio/webm'],
      ['speech.m4a', 'm4a', 'audio/mp4'],
      ['speech.flac', 'flac', 'audio/flac'],
      ['speech-stereo-8k.wav', 'wav', 'audio/wav'],
    ] as const) {
      const res = await server.call('POST', '/v1/files', {
        body: multipartClip(fixture(name), name),
      });
      const body = (await res.json()) as Record<string, unknown>;
      expect(res.status, name).toBe(201);
      expect(body.file_id).toMatch(/^file_[0-9A-Za-z]{24}$/);
      expect(body.content_type, format).toBe(type);
      expect(body.filename).toBe(name);
      expect(body.duration_ms as number).toBeGreaterThanOrEqual(990);
    }
  });

  it('refuses non-audio with 415, clips out of bounds with 422, and oversize uploads with 413', async () => {
    const text = new TextEncoder().encode('this is not audio at all, just words in a file');
    const notAudio = await server.call('POST', '/v1/files', {
      body: multipartClip(text, 'a.txt', 'text/plain'),
    });
    await expectError(notAudio, 415, 'unsupported_audio');
    const short = await server.call('POST', '/v1/files', { body: multipartClip(sineWav(0.4)) });
    await expectError(short, 422, 'clip_too_short');
    const big = await server.call('POST', '/v1/files', { body: multipartClip(sineWav(20)) });
    await expectError(big, 413, 'file_too_large');
    const corrupt = fixture('speech.mp3').slice(0, 200);
    const bad = await server.call('POST', '/v1/files', { body: multipartClip(corrupt, 'x.mp3') });
    expect([415, 422]).toContain(bad.status);
  });

  it('requires multipart with a `file` part', async () => {
    await expectError(
      await server.call('POST', '/v1/files', { json: {} }),
      415,
      'unsupported_media_type',
    );
    const form = new FormData();
    form.append('clip', 'x');
    await expectError(await server.call('POST', '/v1/files', { body: form }), 400, 'unknown_field');
    const empty = new FormData();
    await expectError(
      await server.call('POST', '/v1/files', { body: empty }),
      400,
      'validation_failed',
    );
  });
});

describe('voices', () => {
  it('creates a ready voice from an uploaded file and lists it with the stock voices', async () => {
    const up = await server.call('POST', '/v1/files', {
      body: multipartClip(fixture('speech.mp3'), 'a.mp3'),
    });
    const { file_id } = (await up.json()) as { file_id: string };
    const res = await server.call('POST', '/v1/voices', { json: { name: 'Narrator', file_id } });
    expect(res.status).toBe(201);
    const voice = (await res.json()) as Record<string, string>;
    expect(voice).toMatchObject({
      name: 'Narrator',
      status: 'ready',
      source: 'clone',
      engine: 'espeak',
    });
    expect(voice.voice_id).toMatch(/^vc_[0-9A-Za-z]{24}$/);
    const list = (await (await server.call('GET', '/v1/voices?limit=100')).json()) as {
      data: { voice_id: string; source: string }[];
    };
    expect(list.data[0]!.voice_id).toBe(voice.voice_id);
    expect(list.data.filter((v) => v.source === 'stock')).toHaveLength(AVATAR_CATALOGUE.length);
  }, 90_000); // creating a voice loads the speech detector (WebAssembly) the first time

  it('refuses both or neither of file_id and url with invalid_voice_source', async () => {
    await expectError(
      await server.call('POST', '/v1/voices', { json: { name: 'x' } }),
      400,
      'invalid_voice_source',
    );
    const both = await server.call('POST', '/v1/voices', {
      json: { name: 'x', file_id: `file_${'a'.repeat(24)}`, url: 'https://example.com/a.mp3' },
    });
    await expectError(both, 400, 'invalid_voice_source');
  });

  it("answers another key's file and an unknown file with 404", async () => {
    const up = await server.call('POST', '/v1/files', {
      body: multipartClip(fixture('speech.mp3')),
    });
    const { file_id } = (await up.json()) as { file_id: string };
    const other = await server.newKey();
    const res = await server.call('POST', '/v1/voices', {
      json: { name: 'x', file_id },
      auth: other.secret,
    });
    await expectError(res, 404, 'file_not_found', 'not_found');
  });

  it('refuses non-http and private URLs without contacting them', async () => {
    for (const url of ['ftp://example.com/a.mp3', 'file:///etc/passwd', 'not a url']) {
      const res = await server.call('POST', '/v1/voices', { json: { name: 'x', url } });
      expect((await expectError(res, 400, 'url_not_allowed')).param).toBe('url');
    }
    for (const url of [
      `${clipBaseUrl}/clip.mp3`,
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/a.mp3',
      'http://10.1.2.3/a.mp3',
      `http://localhost:${new URL(clipBaseUrl).port}/clip.mp3`,
    ]) {
      const res = await server.call('POST', '/v1/voices', { json: { name: 'x', url } });
      await expectError(res, 400, 'url_not_allowed');
    }
  });
});

describe('voices from URLs when private addresses are allowed (development)', () => {
  let dev: TestServer;
  beforeAll(async () => {
    dev = await startTestServer({ config: { allowPrivateUrls: true } });
  });
  afterAll(() => dev?.close());

  it('fetches a clip, following redirects', async () => {
    for (const path of ['/clip.mp3', '/redirect']) {
      const res = await dev.call('POST', '/v1/voices', {
        json: { name: 'web', url: clipBaseUrl + path },
      });
      expect(res.status, path).toBe(201);
    }
  });

  it('reports unreachable URLs and HTTP errors as url_unreachable', async () => {
    const missing = await dev.call('POST', '/v1/voices', {
      json: { name: 'x', url: `${clipBaseUrl}/gone.mp3` },
    });
    await expectError(missing, 400, 'url_unreachable');
    const closed = await dev.call('POST', '/v1/voices', {
      json: { name: 'x', url: 'http://127.0.0.1:1/a.mp3' },
    });
    await expectError(closed, 400, 'url_unreachable');
  });
});

describe('avatars', () => {
  it('lists the catalogue with default voices', async () => {
    const body = (await (await server.call('GET', '/v1/avatars')).json()) as {
      data: { avatar_id: string; default_voice_id: string }[];
    };
    expect(body.data.map((a) => a.avatar_id)).toEqual(AVATAR_CATALOGUE.map((a) => a.avatarId));
    expect(body.data[0]!.default_voice_id).toMatch(/^voice_/);
  });
});

describe('sessions', () => {
  it('creates a session with a token, headers and defaults, and reads it back', async () => {
    const { res, body } = await createSession();
    expect(res.status).toBe(201);
    expect(res.headers.get('x-service-concurrent-sessions')).toBe('1');
    expect(res.headers.get('x-service-max-concurrent-sessions')).toBe('3');
    expect(body).toMatchObject({
      status: 'active',
      avatar_id: AVATAR.avatarId,
      voice_id: AVATAR.defaultVoice.voiceId,
      mode: 'video',
      transport: 'livekit',
      livekit_url: 'ws://127.0.0.1:7880',
      idle_timeout_seconds: 300,
      max_duration_seconds: 3600,
      end_reason: null,
    });
    expect(body.session_id).toMatch(/^ses_[0-9A-Za-z]{24}$/);
    expect(typeof body.participant_token).toBe('string');
    const got = await server.call('GET', `/v1/sessions/${body.session_id}`);
    const read = (await got.json()) as Record<string, unknown>;
    expect(read).not.toHaveProperty('participant_token');
    expect(read.room_name).toBe(body.room_name);
    expect(got.headers.get('x-service-concurrent-sessions')).toBe('1');
    expect((await server.call('DELETE', `/v1/sessions/${body.session_id}`)).status).toBe(204);
  });

  it('mints a participant token limited to the room', async () => {
    const { body } = await createSession();
    const token = String(body.participant_token);
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as {
      video: Record<string, unknown>;
    };
    expect(claims.video).toMatchObject({
      room: body.room_name,
      roomJoin: true,
      canSubscribe: true,
      canPublishData: true,
      canPublishSources: ['microphone'],
    });
    expect(claims.video.roomAdmin).toBeUndefined();
    expect(claims.video.roomCreate).toBeUndefined();
    // The token is not an API key.
    await expectError(
      await server.call('GET', '/v1/sessions', { auth: token }),
      401,
      'invalid_api_key',
    );
    const fresh = await server.call('POST', `/v1/sessions/${body.session_id}/participant_token`);
    expect(fresh.status).toBe(200);
    expect(((await fresh.json()) as { participant_token: string }).participant_token).not.toBe(
      token,
    );
    await server.call('DELETE', `/v1/sessions/${body.session_id}`);
    const ended = await server.call('POST', `/v1/sessions/${body.session_id}/participant_token`);
    await expectError(ended, 409, 'session_ended', 'conflict');
  });

  it('accepts the room_name, publish_on_behalf and idle_timeout_seconds extensions', async () => {
    const { res, body } = await createSession({
      room_name: 'agent-room-1',
      publish_on_behalf: 'agent-1',
      idle_timeout_seconds: 60,
    });
    expect(res.status).toBe(201);
    expect(body).toMatchObject({
      room_name: 'agent-room-1',
      publish_on_behalf: 'agent-1',
      idle_timeout_seconds: 60,
    });
    await server.call('DELETE', `/v1/sessions/${body.session_id}`);
  });

  it("gives the avatar the agent_identity the caller names, never the agent's own", async () => {
    const { res, body } = await createSession({
      room_name: 'agent-room-2',
      publish_on_behalf: 'agent-2',
      agent_identity: 'visage-avatar-2',
    });
    expect(res.status).toBe(201);
    expect(body.agent_identity).toBe('visage-avatar-2');
    await server.call('DELETE', `/v1/sessions/${body.session_id}`);
    const same = await createSession({
      room_name: 'agent-room-2',
      publish_on_behalf: 'agent-2',
      agent_identity: 'agent-2',
    });
    await expectError(same.res, 400, 'validation_failed');
    expect((same.body.error as { param?: string }).param).toBe('agent_identity');
    await expectError(
      (await createSession({ agent_identity: 'bad name' })).res,
      400,
      'validation_failed',
    );
  });

  it('answers unknown avatars and voices with 404', async () => {
    await expectError(
      (await createSession({ avatar_id: 'avt_nope' })).res,
      404,
      'avatar_not_found',
    );
    await expectError((await createSession({ voice_id: 'vc_nope' })).res, 404, 'voice_not_found');
  });

  it('drives a session: speak, audio, interrupt, park and resume, delete', async () => {
    const { body } = await createSession();
    const id = String(body.session_id);
    const speak = await server.call('POST', `/v1/sessions/${id}/speak`, {
      json: { text: 'Hello there.' },
    });
    expect(speak.status).toBe(202);
    const accepted = (await speak.json()) as Record<string, string>;
    expect(accepted).toMatchObject({ session_id: id, status: 'queued' });
    expect(accepted.utterance_id).toMatch(/^utt_/);
    expect(speak.headers.get('x-service-concurrent-sessions')).toBe('1');

    const wav = await server.call('POST', `/v1/sessions/${id}/audio?text=hi`, {
      body: fixture('speech-stereo-8k.wav'),
      headers: { 'content-type': 'audio/wav' },
    });
    expect(wav.status).toBe(202);
    const mp3 = await server.call('POST', `/v1/sessions/${id}/audio`, {
      body: fixture('speech.mp3'),
      headers: { 'content-type': 'audio/mpeg' },
    });
    expect(mp3.status).toBe(202);
    const pcm = await server.call('POST', `/v1/sessions/${id}/audio`, {
      body: new Uint8Array(16_000),
      headers: { 'content-type': 'audio/L16;rate=16000;channels=1' },
    });
    expect(pcm.status).toBe(202);
    const up = await server.call('POST', '/v1/files', {
      body: multipartClip(fixture('speech.mp3')),
    });
    const { file_id } = (await up.json()) as { file_id: string };
    expect(
      (await server.call('POST', `/v1/sessions/${id}/audio`, { json: { file_id } })).status,
    ).toBe(202);
    const notAudio = await server.call('POST', `/v1/sessions/${id}/audio`, {
      body: 'hello',
      headers: { 'content-type': 'text/plain' },
    });
    await expectError(notAudio, 415, 'unsupported_media_type');
    const garbage = await server.call('POST', `/v1/sessions/${id}/audio`, {
      body: new Uint8Array(2000).fill(7),
      headers: { 'content-type': 'audio/wav' },
    });
    await expectError(garbage, 415, 'unsupported_audio');

    const interrupt = await server.call('POST', `/v1/sessions/${id}/interrupt`);
    expect(interrupt.status).toBe(200);
    expect(await interrupt.json()).toMatchObject({
      session_id: id,
      interrupted: false,
      dropped_utterances: 0,
    });

    const park = await server.call('POST', `/v1/sessions/${id}/waiting_state`, {
      json: { waiting: true },
    });
    expect(((await park.json()) as { status: string }).status).toBe('waiting');
    const again = await server.call('POST', `/v1/sessions/${id}/waiting_state`, {
      json: { waiting: true },
    });
    expect(again.status).toBe(200);
    const parkedSpeak = await server.call('POST', `/v1/sessions/${id}/speak`, {
      json: { text: 'x' },
    });
    await expectError(parkedSpeak, 409, 'session_waiting', 'conflict');
    const listed = (await (await server.call('GET', '/v1/sessions?status=waiting')).json()) as {
      data: { session_id: string }[];
    };
    expect(listed.data.map((s) => s.session_id)).toContain(id);
    const resume = await server.call('POST', `/v1/sessions/${id}/waiting_state`, {
      json: { waiting: false },
    });
    expect(((await resume.json()) as { status: string }).status).toBe('active');

    const del = await server.call('DELETE', `/v1/sessions/${id}`);
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
    expect((await server.call('DELETE', `/v1/sessions/${id}`)).status).toBe(204);
    const ended = (await (await server.call('GET', `/v1/sessions/${id}`)).json()) as Record<
      string,
      unknown
    >;
    expect(ended).toMatchObject({ status: 'ended', end_reason: 'deleted' });
    expect(ended.ended_at).toEqual(expect.any(String));
    await expectError(
      await server.call('POST', `/v1/sessions/${id}/speak`, { json: { text: 'late' } }),
      409,
      'session_ended',
    );
  });

  it('limits speak text', async () => {
    const { body } = await createSession();
    const id = String(body.session_id);
    const long = await server.call('POST', `/v1/sessions/${id}/speak`, {
      json: { text: 'a'.repeat(4097) },
    });
    expect((await expectError(long, 400, 'text_too_long')).param).toBe('text');
    const empty = await server.call('POST', `/v1/sessions/${id}/speak`, { json: { text: '' } });
    await expectError(empty, 400, 'validation_failed');
    await server.call('DELETE', `/v1/sessions/${id}`);
  });

  it("answers another key's session and unknown ids exactly like missing ones (404)", async () => {
    const { body } = await createSession();
    const other = await server.newKey();
    for (const [method, path, json] of [
      ['GET', `/v1/sessions/${body.session_id}`, undefined],
      ['POST', `/v1/sessions/${body.session_id}/speak`, { text: 'hi' }],
      ['POST', `/v1/sessions/${body.session_id}/interrupt`, undefined],
      ['DELETE', `/v1/sessions/${body.session_id}`, undefined],
      ['GET', `/v1/sessions/${unknownSessionId()}`, undefined],
    ] as const) {
      const res = await server.call(method, path, { json, auth: other.secret });
      await expectError(res, 404, 'session_not_found');
    }
    const still = (await (await server.call('GET', `/v1/sessions/${body.session_id}`)).json()) as {
      status: string;
    };
    expect(still.status).toBe('active');
    await server.call('DELETE', `/v1/sessions/${body.session_id}`);
  });

  it('lists newest first with limit/after pagination and a status filter', async () => {
    const k = await server.newKey(10);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(String((await createSession({}, k.secret)).body.session_id));
    await server.call('DELETE', `/v1/sessions/${ids[0]}`, { auth: k.secret });
    const page1 = (await (
      await server.call('GET', '/v1/sessions?limit=2', { auth: k.secret })
    ).json()) as {
      data: { session_id: string }[];
      has_more: boolean;
    };
    expect(page1.data.map((s) => s.session_id)).toEqual([ids[4], ids[3]]);
    expect(page1.has_more).toBe(true);
    const page2 = (await (
      await server.call('GET', `/v1/sessions?limit=10&after=${ids[3]}`, { auth: k.secret })
    ).json()) as { data: { session_id: string }[]; has_more: boolean };
    expect(page2.data.map((s) => s.session_id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(page2.has_more).toBe(false);
    const active = (await (
      await server.call('GET', '/v1/sessions?status=active', { auth: k.secret })
    ).json()) as {
      data: unknown[];
    };
    expect(active.data).toHaveLength(4);
    await expectError(
      await server.call('GET', `/v1/sessions?after=${unknownSessionId()}`, { auth: k.secret }),
      400,
      'validation_failed',
    );
    for (const id of ids) await server.call('DELETE', `/v1/sessions/${id}`, { auth: k.secret });
  });
});

describe('concurrency cap', () => {
  it('is atomic: 20 parallel creates with cap 3 give exactly 3 sessions and 17 × 429', async () => {
    const k = await server.newKey(3);
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        server.call('POST', '/v1/sessions', {
          json: { avatar_id: AVATAR.avatarId, mode: 'video' },
          auth: k.secret,
        }),
      ),
    );
    const created = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 429);
    expect(created).toHaveLength(3);
    expect(refused).toHaveLength(17);
    for (const r of refused) {
      expect(r.headers.get('retry-after')).toBe('10');
      expect(r.headers.get('x-service-concurrent-sessions')).toBe('3');
      expect(r.headers.get('x-service-max-concurrent-sessions')).toBe('3');
      const err = await expectError(r, 429, 'concurrency_cap', 'rate_limit');
      expect(err.message).toContain('3');
    }
    const ids = await Promise.all(
      created.map(async (r) => ((await r.json()) as { session_id: string }).session_id),
    );

    // Parked sessions still count.
    await server.call('POST', `/v1/sessions/${ids[0]}/waiting_state`, {
      json: { waiting: true },
      auth: k.secret,
    });
    expect((await createSession({}, k.secret)).res.status).toBe(429);
    // DELETE frees the slot at once.
    await server.call('DELETE', `/v1/sessions/${ids[0]}`, { auth: k.secret });
    const again = await createSession({}, k.secret);
    expect(again.res.status).toBe(201);
    expect(again.res.headers.get('x-service-concurrent-sessions')).toBe('3');
    // A cap change applies at once.
    await keyAdmin.setCap(server.store, k.id, 4);
    const fourth = await createSession({}, k.secret);
    expect(fourth.res.status).toBe(201);
    expect(fourth.res.headers.get('x-service-max-concurrent-sessions')).toBe('4');
    for (const id of [...ids.slice(1), again.body.session_id, fourth.body.session_id]) {
      await server.call('DELETE', `/v1/sessions/${id}`, { auth: k.secret });
    }
  });

  it('answers platform_busy when the node is at capacity though the key is under its cap', async () => {
    const small = await startTestServer({ config: { maxSessions: 1 } });
    try {
      const first = await small.call('POST', '/v1/sessions', {
        json: { avatar_id: AVATAR.avatarId, mode: 'video' },
      });
      expect(first.status).toBe(201);
      const second = await small.call('POST', '/v1/sessions', {
        json: { avatar_id: AVATAR.avatarId, mode: 'video' },
      });
      expect(second.headers.get('retry-after')).toBe('10');
      expect(second.headers.get('x-service-concurrent-sessions')).toBe('1');
      await expectError(second, 429, 'platform_busy', 'rate_limit');
    } finally {
      await small.close();
    }
  });
});

describe('idle timeout and request rate', () => {
  it('ends an idle session and frees its slot when the timeout fires', async () => {
    // The session's timers run on a fake clock (timerClock): the timeout is the behaviour
    // under test, not a wall-clock wait.
    const clock = timerClock();
    const k = await server.newKey(1);
    const { body } = await createSession({ idle_timeout_seconds: 5 }, k.secret);
    expect((await createSession({}, k.secret)).res.status).toBe(429);
    const session = async () =>
      (await (
        await server.call('GET', `/v1/sessions/${body.session_id}`, { auth: k.secret })
      ).json()) as { status: string; end_reason: string | null };
    try {
      await clock.advance(4_000);
      expect((await session()).status).toBe('active'); // not before its 5 s
      await clock.advance(1_500);
      // Ended once the timeout fired (polled: the end is written to the database).
      await expect.poll(session, { timeout: 15_000, interval: 50 }).toMatchObject({
        status: 'ended',
        end_reason: 'idle_timeout',
      });
    } finally {
      clock.restore();
    }
    const next = await createSession({}, k.secret);
    expect(next.res.status).toBe(201);
    await server.call('DELETE', `/v1/sessions/${next.body.session_id}`, { auth: k.secret });
  });

  it('limits the request rate per key with 429 too_many_requests', async () => {
    const limited = await startTestServer({ limits: { requestsPerSecond: 1, requestBurst: 3 } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await limited.call('GET', '/v1/avatars')).status);
      expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
      expect(statuses.slice(3)).toEqual([429, 429]);
      const res = await limited.call('GET', '/v1/avatars');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      await expectError(res, 429, 'too_many_requests');
    } finally {
      await limited.close();
    }
  });
});

describe('maximum session length', () => {
  it('ends even a parked session (exempt from the idle timeout) when the maximum length is reached', async () => {
    const short = await startTestServer({ limits: { maxDurationSeconds: 8 } });
    const clock = timerClock();
    try {
      const res = await short.call('POST', '/v1/sessions', {
        json: { avatar_id: AVATAR.avatarId, mode: 'video', idle_timeout_seconds: 5 },
      });
      const { session_id, max_duration_seconds } = (await res.json()) as {
        session_id: string;
        max_duration_seconds: number;
      };
      expect(max_duration_seconds).toBe(8);
      await short.call('POST', `/v1/sessions/${session_id}/waiting_state`, {
        json: { waiting: true },
      });
      await clock.advance(6_000);
      const parked = (await (await short.call('GET', `/v1/sessions/${session_id}`)).json()) as {
        status: string;
      };
      expect(parked.status).toBe('waiting');
      await clock.advance(2_500);
      // Ended at 8 s (polled: the end is written to the database).
      await expect
        .poll(async () => (await short.call('GET', `/v1/sessions/${session_id}`)).json(), {
          timeout: 15_000,
          interval: 50,
        })
        .toMatchObject({ status: 'ended', end_reason: 'max_duration' });
    } finally {
      clock.restore();
      await short.close();
    }
  }, 30_000);
});

/**
 * A fake clock for the timers a test's sessions set from now on (`setTimeout`, as the idle and
 * maximum-length timers use): `advance` moves it on. Only those two functions are faked, and the
 * fake clock also moves with real time, so that I/O, the database and the HTTP calls carry on.
 */
function timerClock() {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'], shouldAdvanceTime: true });
  return {
    advance: (ms: number) => vi.advanceTimersByTimeAsync(ms),
    restore: () => vi.useRealTimers(),
  };
}
