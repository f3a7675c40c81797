// SPDX-License-Identifier: GPL-3.0-or-later
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { photoThreadPool } from '../../src/media/photo/index.js';
import { renderStill } from '../../src/media/render/index.js';
import { builtPortrait, portraitAtlas } from './builtPortraits.js';
import { astronaut } from './portraits.js';

afterAll(() => photoThreadPool().close());

const stored = () => readdirSync(join(process.env.VISAGE_TEST_SCRATCH!, 'portraits'));

describe('a portrait built once per run', () => {
  it('is built by the first file that asks and read from the run by the next', async () => {
    const first = await builtPortrait(astronaut());
    const builds = stored().filter((f) => f.endsWith('.v8'));
    const written = () =>
      builds.map((f) => statSync(join(process.env.VISAGE_TEST_SCRATCH!, 'portraits', f)).mtimeMs);
    const writtenAt = written();
    // Another file asking (a fresh copy of the same bytes): the stored build, not a new one.
    const again = await builtPortrait(new Uint8Array(astronaut()));
    expect(stored().filter((f) => f.endsWith('.v8'))).toEqual(builds);
    expect(written(), 'the stored build, read and not made again').toEqual(writtenAt);
    expect(again.atlasId).toBe(first.atlasId);
    expect(Buffer.isBuffer(again.output.build)).toBe(true);
    expect(again.output.build.equals(first.output.build)).toBe(true);
    expect(again.output.preview.equals(first.output.preview)).toBe(true);
    expect(again.output.pose).toEqual(first.output.pose);
    // What the tests render from it: a real frame of the atlas.
    const { atlas } = await portraitAtlas(astronaut());
    expect(renderStill(atlas, {}).length).toBe((512 * 512 * 3) / 2);
  }, 300_000);

  it('is another build for another picture', async () => {
    // The astronaut again, as a JPEG: another picture's bytes (no other file builds this one).
    const face = new Uint8Array(await sharp(astronaut()).jpeg({ quality: 90 }).toBuffer());
    // Its own stored build, by its key (other files store theirs in the same folder meanwhile,
    // so a count of the folder would race with them).
    const itsBuild = (id: string) => (f: string) =>
      f.startsWith(id.slice('portrait-'.length)) && f.endsWith('.v8');
    const before = stored();
    const other = await builtPortrait(face);
    expect(other.atlasId).not.toBe((await builtPortrait(astronaut())).atlasId);
    expect(before.filter(itsBuild(other.atlasId))).toEqual([]);
    expect(stored().filter(itsBuild(other.atlasId))).toHaveLength(1);
  }, 300_000);
});
