// SPDX-License-Identifier: GPL-3.0-or-later
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { startTestServer, type TestServer } from './testServer.js';
import { multipartClip } from './wav.js';

/**
 * Issue 9, item 10: ids are checked against their format before any lookup (a malformed path
 * id is a 404 like an unknown one), strings with control characters are 400 validation_failed,
 * and no file is written for a row that cannot be written.
 */
const AVATAR = AVATAR_CATALOGUE[0]!;
const fixture = (name: string) => new Uint8Array(readFileSync(`test/fixtures/audio/${name}`));

let server: TestServer;
let sessionId: string;

beforeAll(async () => {
  server = await startTestServer({ cap: 10 });
  const res = await server.call('POST', '/v1/sessions', {
    json: { avatar_id: AVATAR.avatarId, mode: 'video' },
  });
  sessionId = ((await res.json()) as { session_id: string }).session_id;
});
afterAll(() => server?.close());

async function errorOf(res: Response) {
  const body = (await res.json()) as { error: { code: string; param?: string } };
  return { status: res.status, code: body.error.code, param: body.error.param };
}

const storedFiles = () => {
  try {
    return readdirSync(join(server.dataDir, 'files')).filter((f) => !f.startsWith('.'));
  } catch {
    return [];
  }
};

describe('malformed ids', () => {
  it('answers path ids that are not session ids with 404 session_not_found', async () => {
    for (const id of [
      '%00',
      'ses_%00',
      `ses_${'A'.repeat(23)}%00`,
      'ses_x',
      'vc_' + 'A'.repeat(24),
    ]) {
      for (const [method, suffix] of [
        ['GET', ''],
        ['DELETE', ''],
        ['POST', '/interrupt'],
        ['POST', '/participant_token'],
      ] as const) {
        const res = await server.call(method, `/v1/sessions/${id}${suffix}`);
        expect(await errorOf(res), `${method} ${id}${suffix}`).toMatchObject({
          status: 404,
          code: 'session_not_found',
        });
      }
    }
    const speak = await server.call('POST', '/v1/sessions/%00/speak', { json: { text: 'hi' } });
    expect(await errorOf(speak)).toMatchObject({ status: 404, code: 'session_not_found' });
  });

  it('refuses malformed list cursors with 400 validation_failed, like unknown ones', async () => {
    for (const after of ['ses_%00', '%00', 'ses_short', `vc_${'A'.repeat(24)}`]) {
      const res = await server.call('GET', `/v1/sessions?after=${after}`);
      expect(await errorOf(res), after).toEqual({
        status: 400,
        code: 'validation_failed',
        param: 'after',
      });
    }
    const voices = await server.call('GET', '/v1/voices?after=vc_%00');
    expect(await errorOf(voices)).toMatchObject({ status: 400, code: 'validation_failed' });
  });

  it('answers body ids that are not ids of their kind with 404, control characters with 400', async () => {
    const create = (json: Record<string, unknown>) =>
      server.call('POST', '/v1/sessions', {
        json: { avatar_id: AVATAR.avatarId, mode: 'video', ...json },
      });
    expect(await errorOf(await create({ voice_id: 'vc_a\u0000' }))).toEqual({
      status: 400,
      code: 'validation_failed',
      param: 'voice_id',
    });
    expect(await errorOf(await create({ voice_id: 'vc_nope' }))).toEqual({
      status: 404,
      code: 'voice_not_found',
      param: 'voice_id',
    });
    expect(await errorOf(await create({ avatar_id: 'avt_\u0000' }))).toMatchObject({
      status: 400,
      code: 'validation_failed',
    });
    const voice = await server.call('POST', '/v1/voices', {
      json: { name: 'x', file_id: 'file_nope' },
    });
    expect(await errorOf(voice)).toEqual({ status: 404, code: 'file_not_found', param: 'file_id' });
    const audio = await server.call('POST', `/v1/sessions/${sessionId}/audio`, {
      json: { file_id: 'file_\u0000' },
    });
    expect(await errorOf(audio)).toMatchObject({ status: 400, code: 'validation_failed' });
  });
});

describe('control characters in free strings', () => {
  it('refuses them with 400 validation_failed naming the field', async () => {
    const cases: [string, string, Record<string, unknown>, string][] = [
      ['POST', '/v1/voices', { name: 'Ada\u0000', url: 'https://example.com/a.mp3' }, 'name'],
      ['POST', '/v1/voices', { name: 'Ada', url: 'https://example.com/\u0000.mp3' }, 'url'],
      ['POST', `/v1/sessions/${sessionId}/speak`, { text: 'Hello\u0000 there' }, 'text'],
      ['POST', `/v1/sessions/${sessionId}/speak`, { text: 'bell\u0007' }, 'text'],
      [
        'POST',
        '/v1/sessions',
        { avatar_id: AVATAR.avatarId, mode: 'video', room_name: 'room\u0000' },
        'room_name',
      ],
      [
        'POST',
        '/v1/sessions',
        { avatar_id: AVATAR.avatarId, mode: 'video', publish_on_behalf: 'agent\u001b' },
        'publish_on_behalf',
      ],
    ];
    for (const [method, path, json, param] of cases) {
      const res = await server.call(method, path, { json });
      expect(await errorOf(res), `${path} ${param}`).toEqual({
        status: 400,
        code: 'validation_failed',
        param,
      });
    }
    const query = await server.call('POST', `/v1/sessions/${sessionId}/audio?text=a%00b`, {
      body: fixture('speech.mp3'),
      headers: { 'content-type': 'audio/mpeg' },
    });
    expect(await errorOf(query)).toEqual({ status: 400, code: 'validation_failed', param: 'text' });
  });

  it('still speaks prose with line breaks and tabs', async () => {
    const res = await server.call('POST', `/v1/sessions/${sessionId}/speak`, {
      json: { text: 'First line.\nSecond\tline.\r\n' },
    });
    expect(res.status).toBe(202);
  });

  it('writes no file for a voice or an upload that is refused', async () => {
    const before = storedFiles();
    const up = await server.call('POST', '/v1/files', {
      body: multipartClip(fixture('speech.mp3'), 'clip\u0000.mp3', 'audio/mpeg'),
    });
    expect(await errorOf(up)).toMatchObject({ status: 400, code: 'validation_failed' });
    const good = await server.call('POST', '/v1/files', {
      body: multipartClip(fixture('speech.mp3'), 'clip.mp3', 'audio/mpeg'),
    });
    const { file_id } = (await good.json()) as { file_id: string };
    const withUpload = storedFiles();
    expect(withUpload).toHaveLength(before.length + 1);
    const voice = await server.call('POST', '/v1/voices', {
      json: { name: 'Nul\u0000', file_id },
    });
    expect(await errorOf(voice)).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(storedFiles()).toEqual(withUpload);
  });
});
