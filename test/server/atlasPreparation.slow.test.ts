// SPDX-License-Identifier: GPL-3.0-or-later
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Avatar, CreatedSession } from '@visage-avatar/client/api';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { photoThreadPool } from '../../src/media/photo/index.js';
import { atlasCacheKey, atlasFileCached } from '../../src/media/render/index.js';
import * as portraits from '../support/portraits.js';
import { testLogger } from '../support/testLog.js';
import { atlasKept, decoded, KEPT_WITHIN_MS, rawGet, type RawAnswer } from './atlasFetch.js';
import { startTestServer, type TestServer } from './testServer.js';

/**
 * The atlas compressed off the hot path of live sessions (issue 48): when a photo avatar is made,
 * in a child process at the lowest priority (nice 19); a `client` session's create starts no
 * compression; a fetch that comes before the kept files is answered at once with a compression
 * no cache keeps, and has the kept one made; a failed compression is logged and made again at
 * the next fetch. Real server, database, photo build and renderer; the nice value is the one the
 * child read itself.
 */

const STOCK = AVATAR_CATALOGUE[2]!.avatarId;
const COMPRESSED = 'atlas compressed for browsers';
const KEPT_BEFORE = 'atlas kept before: not compressed again';
const FAILED = 'atlas not compressed (tried again at its next fetch)';

let server: TestServer;
const lines: Record<string, unknown>[] = [];
const atlasWeb = () => join(server.dataDir, 'cache', 'atlas-web');

beforeAll(async () => {
  server = await startTestServer({
    start: { log: testLogger((line) => lines.push(line)) },
    cap: 10,
  });
});

afterAll(async () => {
  await server?.close();
  await photoThreadPool().close();
});

const linesOf = (msg: string, avatarId: string) =>
  lines.filter((l) => l.msg === msg && l.avatar_id === avatarId);

async function clientSession(avatarId: string): Promise<CreatedSession> {
  const res = await server.call('POST', '/v1/sessions', {
    json: { avatar_id: avatarId, mode: 'client' },
  });
  expect(res.status).toBe(201);
  return (await res.json()) as CreatedSession;
}

function expectKept(answer: RawAnswer, file: Buffer): void {
  expect(answer.status).toBe(200);
  expect(answer.headers['cache-control']).toMatch(/^public, max-age=\d+, immutable$/);
  expect(answer.headers.etag).toMatch(/^"[0-9a-f]{20}-(br|gzip)"$/);
  expect(Buffer.compare(answer.body, file)).toBe(0);
}

/** A fast compression: the atlas all the same, but no cache may keep it, and no ETag. */
function expectFast(answer: RawAnswer, atlas: Uint8Array): void {
  expect(answer.status).toBe(200);
  expect(answer.headers['content-encoding']).toBe('br');
  expect(answer.headers['cache-control']).toBe('no-store');
  expect(answer.headers.etag).toBeUndefined();
  expect(Buffer.compare(decoded(answer), atlas)).toBe(0);
}

describe('the atlas for browsers, compressed off the hot path', () => {
  it(
    'a photo avatar has it compressed when made, at priority 19, with no session and no fetch',
    async () => {
      const res = await server.call('POST', '/v1/avatars', {
        body: portraits.multipartImage(portraits.astronaut(), { name: 'Kept' }),
      });
      expect(res.status).toBe(201);
      const photo = (await res.json()) as Avatar;
      const files = await atlasKept(server.dataDir, photo.avatar_id);
      const [done] = linesOf(COMPRESSED, photo.avatar_id);
      const build = await server.files.get(`${photo.avatar_id}.build`);
      expect(done).toMatchObject({ nice: 19, raw_bytes: build.byteLength });
      console.log(
        `photo atlas compressed at nice ${String(done?.nice)}: ${String(done?.raw_bytes)} B raw, brotli q9 ${String(done?.br_bytes)} B in ${String(done?.br_ms)} ms, gzip 6 ${String(done?.gzip_bytes)} B in ${String(done?.gzip_ms)} ms`,
      );
      // What a client session's viewers get: those files, cacheable.
      const session = await clientSession(photo.avatar_id);
      const br = await rawGet(session.atlas_url!, { 'accept-encoding': 'br' });
      expectKept(
        br,
        readFileSync(
          join(
            atlasWeb(),
            files.find((f) => f.endsWith('.br'))!,
          ),
        ),
      );
      const gz = await rawGet(session.atlas_url!, { 'accept-encoding': 'gzip' });
      expectKept(
        gz,
        readFileSync(
          join(
            atlasWeb(),
            files.find((f) => f.endsWith('.gz'))!,
          ),
        ),
      );
      expect(Buffer.compare(decoded(gz), decoded(br))).toBe(0);
      await server.call('DELETE', `/v1/sessions/${session.session_id}`);
    },
    120_000 + KEPT_WITHIN_MS,
  );

  it(
    "a client session's create compresses nothing; a fetch before the kept files is served at once, a failure logged and made again",
    async () => {
      const atlas = (await atlasFileCached(STOCK, join(server.dataDir, 'cache'))).bytes;
      // The kept brotli file cannot be written: a directory holds its name.
      const blocked = join(atlasWeb(), `${STOCK}-${atlasCacheKey(STOCK)}.br`);
      mkdirSync(join(blocked, 'in-the-way'), { recursive: true });

      const session = await clientSession(STOCK);
      // Not compressed by the create: the first fetch finds nothing kept.
      expectFast(await rawGet(session.atlas_url!, { 'accept-encoding': 'br' }), atlas);
      // That fetch had it compressed, which failed: logged, nothing kept.
      await vi.waitFor(() => expect(linesOf(FAILED, STOCK)).toHaveLength(1), {
        timeout: KEPT_WITHIN_MS,
        interval: 100,
      });
      expect(linesOf(COMPRESSED, STOCK)).toHaveLength(0);

      // The next fetch after the cause is gone has it made again.
      rmSync(blocked, { recursive: true });
      expectFast(await rawGet(session.atlas_url!, { 'accept-encoding': 'br' }), atlas);
      const files = await atlasKept(server.dataDir, STOCK);
      expect(linesOf(COMPRESSED, STOCK)).toMatchObject([{ nice: 19 }]);
      const kept = await rawGet(session.atlas_url!, { 'accept-encoding': 'br' });
      expectKept(
        kept,
        readFileSync(
          join(
            atlasWeb(),
            files.find((f) => f.endsWith('.br'))!,
          ),
        ),
      );
      expect(Buffer.compare(decoded(kept), atlas)).toBe(0);
      // A client that kept it asks again: 304, with or without the file on this node.
      const again = await rawGet(session.atlas_url!, {
        'accept-encoding': 'br',
        'if-none-match': String(kept.headers.etag),
      });
      expect(again.status).toBe(304);
      await server.call('DELETE', `/v1/sessions/${session.session_id}`);
    },
    120_000 + 2 * KEPT_WITHIN_MS,
  );

  it(
    'a node started with prepareStockAtlases compresses the stock atlases not kept before, with no fetch',
    async () => {
      // The same data directory, restarted (as `visage dev|serve` run): STOCK was kept above.
      const dataDir = server.dataDir;
      await server.close();
      lines.length = 0;
      server = await startTestServer({
        dataDir,
        start: { log: testLogger((line) => lines.push(line)), prepareStockAtlases: true },
      });
      const others = AVATAR_CATALOGUE.map((a) => a.avatarId).filter((id) => id !== STOCK);
      for (const id of others) await atlasKept(dataDir, id);
      for (const id of others) expect(linesOf(COMPRESSED, id)).toMatchObject([{ nice: 19 }]);
      // One at a time (each child from its start to its files renamed; ms rounding aside)...
      const spans = others
        .map((id) => linesOf(COMPRESSED, id)[0]!)
        .map((l) => ({ end: Number(l.time), start: Number(l.time) - Number(l.wall_ms) }))
        .sort((a, b) => a.end - b.end);
      for (let i = 1; i < spans.length; i++) {
        expect(spans[i]!.start).toBeGreaterThanOrEqual(spans[i - 1]!.end - 2);
      }
      // ... and not STOCK again: its files were there.
      await vi.waitFor(() => expect(linesOf(KEPT_BEFORE, STOCK)).toHaveLength(1), {
        timeout: KEPT_WITHIN_MS,
      });
      expect(linesOf(COMPRESSED, STOCK)).toHaveLength(0);
      expect(await atlasKept(dataDir, STOCK)).toHaveLength(2);
    },
    120_000 + 5 * KEPT_WITHIN_MS,
  );
});
