// SPDX-License-Identifier: GPL-3.0-or-later
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MediaCore, MediaSessionSpec } from '../../src/media/mediaCore.js';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { DetachedMediaCore } from './detachedMedia.js';
import { startTestServer, type TestServer } from './testServer.js';
import { multipartClip } from './wav.js';

const AVATAR = AVATAR_CATALOGUE[0]!;
const SPEECH = new Uint8Array(readFileSync('test/fixtures/audio/speech.mp3'));

/** The detached media seam, remembering what each session was started with. */
class RecordingMediaCore implements MediaCore {
  readonly kind = 'detached';
  readonly started: MediaSessionSpec[] = [];
  private readonly detached = new DetachedMediaCore();
  start(spec: MediaSessionSpec) {
    this.started.push(spec);
    return this.detached.start(spec);
  }
  running() {
    return this.detached.running();
  }
  close() {
    return this.detached.close();
  }
}

let server: TestServer;
const media = new RecordingMediaCore();

beforeAll(async () => {
  server = await startTestServer({ start: { media }, speechModelLoaded: true });
}, 180_000);
afterAll(() => server?.close());

async function expectError(res: Response, status: number, code: string) {
  const body = (await res.json()) as { error: { code: string; request_id: string } };
  expect({ status: res.status, code: body.error.code }).toEqual({ status, code });
  expect(body.error.request_id).toMatch(/^req_/);
}

async function upload(name = 'speech.mp3', auth?: string): Promise<Record<string, unknown>> {
  const res = await server.call('POST', '/v1/files', {
    body: multipartClip(SPEECH, name, 'audio/mpeg'),
    auth,
  });
  expect(res.status).toBe(201);
  return (await res.json()) as Record<string, unknown>;
}

async function createVoice(fileId: string, name = 'Narrator'): Promise<Record<string, unknown>> {
  const res = await server.call('POST', '/v1/voices', { json: { name, file_id: fileId } });
  expect(res.status).toBe(201);
  return (await res.json()) as Record<string, unknown>;
}

describe('files', () => {
  it('lists (newest first, paged), fetches and deletes uploaded files', async () => {
    const k = await server.newKey();
    const a = await upload('a.mp3', k.secret);
    const b = await upload('b.mp3', k.secret);
    const page1 = (await (
      await server.call('GET', '/v1/files?limit=1', { auth: k.secret })
    ).json()) as {
      data: { file_id: string }[];
      has_more: boolean;
    };
    expect(page1).toMatchObject({ data: [{ file_id: b.file_id }], has_more: true });
    const page2 = (await (
      await server.call('GET', `/v1/files?limit=1&after=${String(b.file_id)}`, { auth: k.secret })
    ).json()) as { data: { file_id: string }[]; has_more: boolean };
    expect(page2).toMatchObject({ data: [{ file_id: a.file_id }], has_more: false });

    const got = await server.call('GET', `/v1/files/${String(a.file_id)}`, { auth: k.secret });
    expect(got.status).toBe(200);
    expect(await got.json()).toEqual(a);

    const del = await server.call('DELETE', `/v1/files/${String(a.file_id)}`, { auth: k.secret });
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
    // Idempotent: deleting again is a 204 too; the file is gone from reads and lists.
    const again = await server.call('DELETE', `/v1/files/${String(a.file_id)}`, { auth: k.secret });
    expect(again.status).toBe(204);
    await expectError(
      await server.call('GET', `/v1/files/${String(a.file_id)}`, { auth: k.secret }),
      404,
      'file_not_found',
    );
    const list = (await (await server.call('GET', '/v1/files', { auth: k.secret })).json()) as {
      data: { file_id: string }[];
    };
    expect(list.data.map((f) => f.file_id)).toEqual([b.file_id]);
  });

  it("answers another key's file, an unknown one and a malformed id with 404", async () => {
    const mine = await upload();
    const other = await server.newKey();
    for (const method of ['GET', 'DELETE']) {
      await expectError(
        await server.call(method, `/v1/files/${String(mine.file_id)}`, { auth: other.secret }),
        404,
        'file_not_found',
      );
      await expectError(
        await server.call(method, `/v1/files/file_${'Z'.repeat(24)}`),
        404,
        'file_not_found',
      );
      await expectError(await server.call(method, '/v1/files/not-an-id'), 404, 'file_not_found');
    }
    // The other key's DELETE did not touch it.
    expect((await server.call('GET', `/v1/files/${String(mine.file_id)}`)).status).toBe(200);
    const list = (await (await server.call('GET', '/v1/files', { auth: other.secret })).json()) as {
      data: unknown[];
    };
    expect(list.data).toEqual([]);
  });

  it('a deleted file can no longer make a voice or be played', async () => {
    const file = await upload();
    await server.call('DELETE', `/v1/files/${String(file.file_id)}`);
    await expectError(
      await server.call('POST', '/v1/voices', { json: { name: 'x', file_id: file.file_id } }),
      404,
      'file_not_found',
    );
  });
});

describe('voices', () => {
  it('fetches a cloned and a stock voice', async () => {
    const voice = await createVoice(String((await upload()).file_id));
    const got = await server.call('GET', `/v1/voices/${String(voice.voice_id)}`);
    expect(got.status).toBe(200);
    expect(await got.json()).toEqual(voice);
    const stock = await server.call('GET', `/v1/voices/${AVATAR.defaultVoice.voiceId}`);
    expect(stock.status).toBe(200);
    expect(await stock.json()).toMatchObject({
      voice_id: AVATAR.defaultVoice.voiceId,
      source: 'stock',
    });
  });

  it('keeps working after the file it was made from is deleted (it owns its clip)', async () => {
    const file = await upload();
    const voice = await createVoice(String(file.file_id));
    expect((await server.call('DELETE', `/v1/files/${String(file.file_id)}`)).status).toBe(204);
    expect((await server.call('GET', `/v1/voices/${String(voice.voice_id)}`)).status).toBe(200);
    const res = await server.call('POST', '/v1/sessions', {
      json: { avatar_id: AVATAR.avatarId, mode: 'video', voice_id: voice.voice_id },
    });
    expect(res.status).toBe(201);
    const { session_id } = (await res.json()) as { session_id: string };
    const spec = media.started.find((s) => s.sessionId === session_id)!;
    expect(spec.voiceProfile).toBeTruthy();
    expect((await server.call('DELETE', `/v1/sessions/${session_id}`)).status).toBe(204);
  });

  it('deletes a voice idempotently; a live session using it keeps it until it ends', async () => {
    const voice = await createVoice(String((await upload()).file_id));
    const id = String(voice.voice_id);
    const res = await server.call('POST', '/v1/sessions', {
      json: { avatar_id: AVATAR.avatarId, mode: 'video', voice_id: id },
    });
    expect(res.status).toBe(201);
    const { session_id } = (await res.json()) as { session_id: string };
    const profile = media.started.find((s) => s.sessionId === session_id)!.voiceProfile;
    expect(profile).toBeTruthy();

    const del = await server.call('DELETE', `/v1/voices/${id}`);
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
    expect((await server.call('DELETE', `/v1/voices/${id}`)).status).toBe(204);
    await expectError(await server.call('GET', `/v1/voices/${id}`), 404, 'voice_not_found');
    const list = (await (await server.call('GET', '/v1/voices?limit=100')).json()) as {
      data: { voice_id: string }[];
    };
    expect(list.data.map((v) => v.voice_id)).not.toContain(id);

    // The live session still speaks with the profile it started with.
    const spoken = await server.call('POST', `/v1/sessions/${session_id}/speak`, {
      json: { text: 'Still here, with the same voice.' },
    });
    expect(spoken.status).toBe(202);
    expect(
      (
        (await (await server.call('GET', `/v1/sessions/${session_id}`)).json()) as Record<
          string,
          unknown
        >
      ).voice_id,
    ).toBe(id);
    // A new session cannot use it any more.
    await expectError(
      await server.call('POST', '/v1/sessions', {
        json: { avatar_id: AVATAR.avatarId, mode: 'video', voice_id: id },
      }),
      404,
      'voice_not_found',
    );
    expect((await server.call('DELETE', `/v1/sessions/${session_id}`)).status).toBe(204);
  });

  it("answers another key's voice, an unknown one and a malformed id with 404", async () => {
    const voice = await createVoice(String((await upload()).file_id));
    const other = await server.newKey();
    for (const method of ['GET', 'DELETE']) {
      await expectError(
        await server.call(method, `/v1/voices/${String(voice.voice_id)}`, { auth: other.secret }),
        404,
        'voice_not_found',
      );
      await expectError(
        await server.call(method, `/v1/voices/vc_${'Z'.repeat(24)}`),
        404,
        'voice_not_found',
      );
      await expectError(await server.call(method, '/v1/voices/nope'), 404, 'voice_not_found');
    }
    expect((await server.call('GET', `/v1/voices/${String(voice.voice_id)}`)).status).toBe(200);
  });

  it('refuses to delete a stock voice', async () => {
    await expectError(
      await server.call('DELETE', `/v1/voices/${AVATAR.defaultVoice.voiceId}`),
      409,
      'voice_not_deletable',
    );
  });

  it('documents the new endpoints in the OpenAPI document', async () => {
    const doc = (await (await server.call('GET', '/v1/openapi.json', { auth: null })).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(doc.paths['/v1/files']!).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/v1/files/{id}']!).sort()).toEqual(['delete', 'get']);
    expect(Object.keys(doc.paths['/v1/voices/{id}']!).sort()).toEqual(['delete', 'get']);
  });
});
