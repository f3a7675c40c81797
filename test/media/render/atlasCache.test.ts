// SPDX-License-Identifier: GPL-3.0-or-later
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../../src/media/avatarCatalogue.js';
import type { MouthPose } from '../../../src/media/lipsync/viseme.js';
import { cacheKey, prepareAvatarCached } from '../../../src/media/render/atlasCache.js';
import { createFaceRenderer } from '../../../src/media/render/index.js';

const AVATAR = AVATAR_CATALOGUE[2]!.avatarId;
const REST: MouthPose = { viseme: 'rest', openness: 0 };
const dir = mkdtempSync(join(tmpdir(), 'visage-atlas-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A few frames of the avatar with a fixed seed: the same atlas gives the same bytes. */
function frames(): Buffer {
  const renderer = createFaceRenderer(AVATAR, { seed: 7 });
  const out: Buffer[] = [];
  for (let t = 0; t < 4000; t += 400) {
    out.push(Buffer.from(renderer.renderFrame({ timeMs: t, mouth: REST, parked: false })));
  }
  return Buffer.concat(out);
}

const cacheFiles = () => readdirSync(dir).filter((n) => n.startsWith(`atlas-${AVATAR}-`));

describe('avatar atlas cache', () => {
  it('builds once, then loads the same atlas from disk; a corrupt file is rebuilt', async () => {
    const stale = join(dir, `atlas-${AVATAR}-00000000000000000000.bin`);
    writeFileSync(stale, 'an atlas of an older version of the code');

    const built = await prepareAvatarCached(AVATAR, dir);
    expect(built).toMatchObject({ avatarId: AVATAR, source: 'built' });
    expect(built.storeError).toBeUndefined();
    const drawn = frames();
    // Stored under the current key; the other version's file is gone.
    expect(cacheFiles()).toEqual([`atlas-${AVATAR}-${cacheKey(AVATAR)}.bin`]);

    const loaded = await prepareAvatarCached(AVATAR, dir);
    expect(loaded).toMatchObject({ source: 'cache' });
    expect(loaded.rejected).toBeUndefined();
    expect(frames().equals(drawn)).toBe(true);

    // Flip one byte of the payload: the checksum catches it and the atlas is drawn again.
    const path = join(dir, cacheFiles()[0]!);
    const bytes = readFileSync(path);
    bytes[bytes.length - 1000] = bytes[bytes.length - 1000]! ^ 0xff;
    writeFileSync(path, bytes);
    const rebuilt = await prepareAvatarCached(AVATAR, dir);
    expect(rebuilt).toMatchObject({ source: 'built', rejected: 'checksum mismatch' });
    expect(frames().equals(drawn)).toBe(true);
    expect((await prepareAvatarCached(AVATAR, dir)).source).toBe('cache');

    // A truncated file, and one that is not an atlas at all.
    writeFileSync(path, bytes.subarray(0, 5000));
    expect((await prepareAvatarCached(AVATAR, dir)).source).toBe('built');
    writeFileSync(path, 'hello');
    expect((await prepareAvatarCached(AVATAR, dir)).rejected).toBe('not an atlas file');
    expect((await prepareAvatarCached(AVATAR, dir)).source).toBe('cache');
  }, 180_000);

  it('keys the cache by avatar and by the renderer code', () => {
    expect(cacheKey(AVATAR)).toMatch(/^[0-9a-f]{20}$/);
    expect(cacheKey(AVATAR)).toBe(cacheKey(AVATAR));
    expect(cacheKey(AVATAR_CATALOGUE[0]!.avatarId)).not.toBe(cacheKey(AVATAR));
  });
});
