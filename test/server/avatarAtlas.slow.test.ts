// SPDX-License-Identifier: GPL-3.0-or-later
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Avatar, CreatedSession, ErrorEnvelope } from '@visage-avatar/client/api';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import type { MediaSessionSpec } from '../../src/media/mediaCore.js';
import { photoThreadPool } from '../../src/media/photo/index.js';
import { atlasFileCached, readAtlasFileHeader } from '../../src/media/render/index.js';
import { ATLAS_SECRET_NAME, AtlasSigner } from '../../src/server/assets/atlasSignature.js';
import * as portraits from '../support/portraits.js';
import { atlasKept, decoded, KEPT_WITHIN_MS, rawGet, type RawAnswer } from './atlasFetch.js';
import { DetachedMediaCore } from './detachedMedia.js';
import { startTestServer, type TestServer } from './testServer.js';

/**
 * `GET /v1/avatars/{id}/atlas` (issue 48), over real HTTP with a real database and real atlases
 * (a photo avatar built from the astronaut portrait, a stock avatar drawn by the renderer): the
 * URL a `client` session hands out opens the avatar's atlas file, compressed, cacheable, with no
 * API key; every other URL is refused without saying why; the signature survives a restart.
 */

const STOCK = AVATAR_CATALOGUE[1]!.avatarId;
/** The goal for a photo avatar's atlas as a browser downloads it. */
const PHOTO_ATLAS_MAX_BYTES = 2 * 1024 * 1024;
const DAY_S = 86_400;

let server: TestServer;
let photo: Avatar;
let photoSession: CreatedSession;
const started: MediaSessionSpec[] = [];

beforeAll(async () => {
  const media = new DetachedMediaCore({ beforeStart: async (spec) => void started.push(spec) });
  server = await startTestServer({ start: { media }, cap: 10 });
  const res = await server.call('POST', '/v1/avatars', {
    body: portraits.multipartImage(portraits.astronaut(), { name: 'Atlas' }),
  });
  expect(res.status).toBe(201);
  photo = (await res.json()) as Avatar;
  photoSession = await createSession(server, photo.avatar_id);
  // Compressed when it was made, in the background (atlasPreparation.slow.test.ts).
  await atlasKept(server.dataDir, photo.avatar_id);
}, 120_000 + KEPT_WITHIN_MS);

afterAll(async () => {
  await server?.close();
  await photoThreadPool().close();
});

async function createSession(on: TestServer, avatarId: string): Promise<CreatedSession> {
  const res = await on.call('POST', '/v1/sessions', {
    json: { avatar_id: avatarId, mode: 'client' },
  });
  expect(res.status).toBe(201);
  return (await res.json()) as CreatedSession;
}

/** The same URL with its query replaced. */
function withQuery(url: string, query: string): string {
  return `${url.split('?')[0]}?${query}`;
}

function queryOf(url: string): { expires: number; sig: string } {
  const q = new URL(url).searchParams;
  return { expires: Number(q.get('expires')), sig: q.get('sig')! };
}

async function expectRefused(answer: RawAnswer): Promise<ErrorEnvelope['error']> {
  const body = JSON.parse(answer.body.toString('utf8')) as ErrorEnvelope;
  expect({ status: answer.status, code: body.error.code, type: body.error.type }).toEqual({
    status: 403,
    code: 'invalid_signature',
    type: 'authentication',
  });
  expect(answer.headers['access-control-allow-origin']).toBe('*');
  return body.error;
}

describe('the atlas URL of a client session', () => {
  it('is absolute, signed, carries no API key, and is the same in create, get and the media spec', async () => {
    const url = photoSession.atlas_url!;
    expect(url).toMatch(
      new RegExp(
        `^${server.url}/v1/avatars/${photo.avatar_id}/atlas\\?expires=\\d+&sig=[\\w-]{43}$`,
      ),
    );
    expect(url).not.toContain(server.secret);
    expect(url).not.toContain(server.secret.slice(3));
    // Rounded up to a day boundary, at least a day ahead: the same URL all day.
    const { expires } = queryOf(url);
    const now = Date.now() / 1000;
    expect(expires % DAY_S).toBe(0);
    expect(expires - now).toBeGreaterThanOrEqual(DAY_S - 60);
    expect(expires - now).toBeLessThanOrEqual(2 * DAY_S);
    const got = (await (
      await server.call('GET', `/v1/sessions/${photoSession.session_id}`)
    ).json()) as CreatedSession;
    expect(got.atlas_url).toBe(url);
    // The media spec: this URL, then the next day's (a session runs an hour by default), each
    // a day later and each opening the atlas; the face stream names the one of its day.
    const urls = started.find((s) => s.sessionId === photoSession.session_id)?.atlasUrls;
    expect(urls?.map((u) => u.url)[0]).toBe(url);
    expect(urls?.map((u) => u.expires)).toEqual([expires, expires + DAY_S]);
    for (const u of urls ?? []) {
      expect(queryOf(u.url).expires).toBe(u.expires);
      expect((await rawGet(u.url, { 'accept-encoding': 'identity' })).status).toBe(200);
    }
    // A video session has none.
    const video = await server.call('POST', '/v1/sessions', {
      json: { avatar_id: photo.avatar_id, mode: 'video' },
    });
    const videoSession = (await video.json()) as CreatedSession;
    expect(videoSession.atlas_url).toBeUndefined();
    expect(started.find((s) => s.sessionId === videoSession.session_id)?.atlasUrls).toBeUndefined();
    await server.call('DELETE', `/v1/sessions/${videoSession.session_id}`);
  });
});

describe('GET /v1/avatars/{id}/atlas', () => {
  it("answers the photo avatar's atlas file, brotli-compressed under 2 MB, cacheable, CORS open, no key", async () => {
    const fetched = performance.now();
    const nowBefore = Math.floor(Date.now() / 1000);
    const answer = await rawGet(photoSession.atlas_url!, { 'accept-encoding': 'gzip, br' });
    const ms = performance.now() - fetched;
    expect(answer.status).toBe(200);
    expect(answer.headers['content-encoding']).toBe('br');
    const atlas = decoded(answer);
    const build = await server.files.get(`${photo.avatar_id}.build`);
    expect(Buffer.compare(atlas, Buffer.from(build))).toBe(0);
    expect(readAtlasFileHeader(atlas).format).toBe('visage-photo-1');
    console.log(
      `photo atlas: ${build.byteLength} B raw, ${answer.body.byteLength} B brotli (first fetch ${Math.round(ms)} ms)`,
    );
    expect(answer.body.byteLength).toBeLessThanOrEqual(PHOTO_ATLAS_MAX_BYTES);
    const { expires } = queryOf(photoSession.atlas_url!);
    const maxAge = Number(
      /^public, max-age=(\d+), immutable$/.exec(String(answer.headers['cache-control']))?.[1],
    );
    expect(maxAge).toBeGreaterThan(0);
    // Until the expiry, counted when the server answered (between these two clocks).
    expect(maxAge).toBeLessThanOrEqual(expires - nowBefore);
    expect(maxAge).toBeGreaterThanOrEqual(expires - Math.floor(Date.now() / 1000) - 1);
    expect(answer.headers['access-control-allow-origin']).toBe('*');
    expect(answer.headers.vary).toBe('accept-encoding');
    expect(answer.headers['content-type']).toBe('application/octet-stream');
    expect(answer.headers.etag).toMatch(/^"[0-9a-f]{20}-br"$/);

    // Compressed once: kept on disk, and the same bytes again; an unchanged ETag is a 304.
    const kept = readdirSync(join(server.dataDir, 'cache', 'atlas-web'));
    expect(kept).toContain(`${photo.avatar_id}-${answer.headers.etag!.slice(1, 21)}.br`);
    const second = performance.now();
    const again = await rawGet(photoSession.atlas_url!, { 'accept-encoding': 'br' });
    console.log(`photo atlas, from the disk cache: ${Math.round(performance.now() - second)} ms`);
    expect(Buffer.compare(again.body, answer.body)).toBe(0);
    const unchanged = await rawGet(photoSession.atlas_url!, {
      'accept-encoding': 'br',
      'if-none-match': String(answer.headers.etag),
    });
    expect(unchanged.status).toBe(304);
    expect(unchanged.body.byteLength).toBe(0);
  });

  it('answers gzip to a client that takes no brotli, and the file itself to one that takes neither', async () => {
    const build = Buffer.from(await server.files.get(`${photo.avatar_id}.build`));
    const gz = await rawGet(photoSession.atlas_url!, { 'accept-encoding': 'gzip, deflate' });
    expect(gz.status).toBe(200);
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.etag).toMatch(/-gzip"$/);
    expect(Buffer.compare(decoded(gz), build)).toBe(0);
    const plain = await rawGet(photoSession.atlas_url!, { 'accept-encoding': 'identity' });
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(Buffer.compare(plain.body, build)).toBe(0);
    // A browser's fetch decodes it by itself.
    const res = await fetch(photoSession.atlas_url!);
    expect(Buffer.compare(Buffer.from(await res.arrayBuffer()), build)).toBe(0);
  });

  it(
    "serves a stock avatar's atlas: the renderer's atlas file",
    async () => {
      const session = await createSession(server, STOCK);
      const file = await atlasFileCached(STOCK, join(server.dataDir, 'cache'));
      // Before its compression is kept (tests compress no stock atlas at start-up), and after.
      const fast = await rawGet(session.atlas_url!, { 'accept-encoding': 'br' });
      await atlasKept(server.dataDir, STOCK);
      const answer = await rawGet(session.atlas_url!, { 'accept-encoding': 'br' });
      for (const a of [fast, answer]) {
        expect(a.status).toBe(200);
        const atlas = decoded(a);
        expect(Buffer.compare(atlas, file.bytes)).toBe(0);
        expect(readAtlasFileHeader(atlas)).toMatchObject({
          format: 'visage-atlas-3',
          avatarId: STOCK,
        });
      }
      console.log(
        `stock atlas: ${file.bytes.byteLength} B raw, ${answer.body.byteLength} B brotli (before it was kept: ${fast.body.byteLength} B)`,
      );
      await server.call('DELETE', `/v1/sessions/${session.session_id}`);
    },
    KEPT_WITHIN_MS + 60_000,
  );

  it('refuses expired, tampered and borrowed signatures alike (403, no detail), API key or not', async () => {
    const url = photoSession.atlas_url!;
    const { expires, sig } = queryOf(url);
    const signer = new AtlasSigner({
      secret: () => server.store.serverSecret(ATLAS_SECRET_NAME),
      now: () => Date.now() - 3 * DAY_S * 1000,
    });
    // Signed with the server's own secret, but its day is over.
    const expired = await signer.sign(photo.avatar_id);
    expect(expired.expires).toBeLessThan(Date.now() / 1000);
    const flipped = `${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`;
    const stock = queryOf((await createSession(server, STOCK)).atlas_url!);
    const refused = [
      withQuery(url, `expires=${expired.expires}&sig=${expired.sig}`),
      withQuery(url, `expires=${expires + DAY_S}&sig=${sig}`),
      withQuery(url, `expires=${expires}&sig=${flipped}`),
      // Another avatar's signature on this avatar's path.
      withQuery(url, `expires=${stock.expires}&sig=${stock.sig}`),
      withQuery(url, ''),
      withQuery(url, `expires=${expires}`),
      withQuery(url, `expires=${expires}&sig=${sig}&key=${server.secret}`),
      withQuery(url, `expires=1e12&sig=${sig}`),
    ];
    const messages = new Set<string>();
    for (const u of refused) {
      const error = await expectRefused(await rawGet(u, { 'accept-encoding': 'br' }));
      messages.add(error.message);
    }
    expect(messages.size).toBe(1);
    // The API key opens nothing here: not instead of a signature, not beside a wrong one.
    for (const u of [withQuery(url, ''), refused[2]!]) {
      const withKey = await rawGet(u, { authorization: `Bearer ${server.secret}` });
      await expectRefused(withKey);
    }
    // And is not needed beside a good one (a wrong key is not even read).
    const wrongKey = await rawGet(url, { authorization: 'Bearer sk_not_a_key' });
    expect(wrongKey.status).toBe(200);
  });

  it(
    'answers 404 for an avatar that does not exist or was deleted, even with a good signature',
    async () => {
      const signer = new AtlasSigner({
        secret: () => server.store.serverSecret(ATLAS_SECRET_NAME),
      });
      const never = await signer.url(server.url, `avt_${'N'.repeat(24)}`);
      const missing = await rawGet(never);
      expect(missing.status).toBe(404);
      expect(JSON.parse(missing.body.toString()).error.code).toBe('avatar_not_found');

      const res = await server.call('POST', '/v1/avatars', {
        body: portraits.multipartImage(portraits.astronaut(), { name: 'Gone soon' }),
      });
      const gone = (await res.json()) as Avatar;
      const session = await createSession(server, gone.avatar_id);
      await atlasKept(server.dataDir, gone.avatar_id);
      expect((await rawGet(session.atlas_url!, { 'accept-encoding': 'br' })).status).toBe(200);
      const cached = join(server.dataDir, 'cache', 'atlas-web');
      expect(readdirSync(cached).some((f) => f.startsWith(gone.avatar_id))).toBe(true);
      await server.call('DELETE', `/v1/sessions/${session.session_id}`);
      expect((await server.call('DELETE', `/v1/avatars/${gone.avatar_id}`)).status).toBe(204);
      const after = await rawGet(session.atlas_url!, { 'accept-encoding': 'br' });
      expect(after.status).toBe(404);
      expect(JSON.parse(after.body.toString()).error.code).toBe('avatar_not_found');
      expect(readdirSync(cached).some((f) => f.startsWith(gone.avatar_id))).toBe(false);
    },
    KEPT_WITHIN_MS + 60_000,
  );

  it('is in the OpenAPI document: no security, the signed query', async () => {
    const doc = (await (await server.call('GET', '/v1/openapi.json')).json()) as {
      paths: Record<
        string,
        { get: { security?: unknown; parameters: { name: string; required: boolean }[] } }
      >;
    };
    const op = doc.paths['/v1/avatars/{id}/atlas']!.get;
    expect(op.security).toBeUndefined();
    expect(op.parameters.map((p) => [p.name, p.required]).sort()).toEqual([
      ['expires', true],
      ['id', true],
      ['sig', true],
    ]);
  });
});

describe('signing across restarts', () => {
  it(
    'a restarted node signs the same URL and opens the old one; VISAGE_PUBLIC_URL sets the origin',
    async () => {
      const first = await startTestServer({ cap: 5 });
      const before = await createSession(first, STOCK);
      await first.close();
      const again = await startTestServer({
        dataDir: first.dataDir,
        config: { publicUrl: 'https://avatars.example.com/visage/' },
      });
      try {
        const got = (await (
          await again.call('GET', `/v1/sessions/${before.session_id}`, { auth: first.secret })
        ).json()) as CreatedSession;
        const url = new URL(got.atlas_url!);
        expect(`${url.origin}${url.pathname}`).toBe(
          `https://avatars.example.com/visage/v1/avatars/${STOCK}/atlas`,
        );
        expect(url.search).toBe(new URL(before.atlas_url!).search);
        const answer = await rawGet(before.atlas_url!.replace(first.url, again.url), {
          'accept-encoding': 'br',
        });
        expect(answer.status).toBe(200);
        // The fetch had it compressed in this node's data directory.
        await atlasKept(again.dataDir, STOCK);
      } finally {
        await again.close();
      }
    },
    KEPT_WITHIN_MS + 60_000,
  );
});
